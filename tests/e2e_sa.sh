#!/bin/sh
# e2e_sa.sh: the setting-aware inspector from the command line: a small sweep (dataset sweep),
# one setting's rows (dataset extract), a base inspector on them, the setting-aware inspector on
# the sweep (train --sweep), then predict for catalog GPUs and clusters no inspector was trained
# for, with the 80% interval, the OOD flag and iteration_ms / memory_gb in --json, and compare;
# fine-tuned for one setting (transfer --from the setting-aware file); bad arguments refused
# naming what is wrong.
. tests/lib.sh

ok "$DRIPLE" dataset sweep --out "$TMP/sw.json" --models alexnet,squeezenet,bert_tiny \
    --zoo-batches 2 --generated 4 --gen-batches 1 --random 4 --max-workers 8 \
    --settings assets/settings/default.json --quota 2 --allreduce --pytorch --json
contains "$TMP/out" '"simulated": true'
contains "$TMP/sw.json" '"format":"driple-sweep/1"'
ok "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe -o "$TMP/base_ds.json"
contains "$TMP/out" "samples of V100-P1w2ho-PCIe"
contains "$TMP/base_ds.json" '"setting":"V100-P1w2ho-PCIe"'
# several settings at once (the sweep read once), each into DIR/ID.json: the same dataset
mkdir -p "$TMP/dsdir"
ok "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe,H100-AR16-IB-HDR-pytorch-mixed \
    --dir "$TMP/dsdir"
contains "$TMP/out" "samples of H100-AR16-IB-HDR-M2x8-pytorch-mixed"
if cmp -s "$TMP/base_ds.json" "$TMP/dsdir/V100-P1w2ho-PCIe.json"; then pass
else fail "extract --dir wrote another V100-P1w2ho-PCIe dataset than -o"; fi
contains "$TMP/dsdir/H100-AR16-IB-HDR-pytorch-mixed.json" '"setting":"H100-AR16-IB-HDR-M2x8-pytorch-mixed"'
ok "$DRIPLE" train --dataset "$TMP/base_ds.json" -o "$TMP/base.json" --epochs 3 --hidden 16
ok "$DRIPLE" train --sweep "$TMP/sw.json" --body "$TMP/base.json" -o "$TMP/sa.json" \
    --members 2 --hidden1 16 --hidden2 8 --epochs 5 --json
contains "$TMP/out" '"split": "random"'
contains "$TMP/out" '"coverage"'
contains "$TMP/sa.json" '"format":"driple-sa-inspector/1"'
ok "$DRIPLE" train --sweep "$TMP/sw.json" --body "$TMP/base.json" -o "$TMP/sa_gpus.json" \
    --members 1 --hidden1 8 --hidden2 8 --epochs 2 --split networks --test-held PCIe --plain-loss \
    --pair-weight 0
contains "$TMP/out" "networks split holding out PCIe"

# Any catalog GPU and cluster, no inspector trained for it: predicted, with the interval.
ok "$DRIPLE" zoo build resnet18 --batch 32 -o "$TMP/r18.json"
ok "$DRIPLE" predict "$TMP/r18.json" --gpu L4 --workers 3 --ps 2 --network 25GbE \
    --setting-aware "$TMP/sa.json" --json
contains "$TMP/out" '"source": "setting-aware"'
contains "$TMP/out" '"interval": {"level": 0.8'
contains "$TMP/out" '"iteration_ms": ['
contains "$TMP/out" '"ood": '
contains "$TMP/out" '"memory_gb": '
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
m, iv = d["metrics"], d["interval"]["metrics"]
for r in m:
    for k in m[r]:
        lo, hi = iv[r][k]
        assert lo <= m[r][k] <= hi, (r, k)
assert m["gpu_util"]["peak"] <= 100 and m["net_rx"]["peak"] <= 3125
lo, hi = d["interval"]["derived"]["iteration_ms"]
assert lo <= d["derived"]["iteration_ms"] <= hi and d["derived"]["memory_gb"] > 0' "$TMP/out"
    then pass; else fail "predict --json: values inside their intervals and physical ranges"; fi
fi
ok "$DRIPLE" predict "$TMP/r18.json" --gpu H100-SXM --sync allreduce --workers 16 \
    --network IB-HDR --framework pytorch --precision mixed --setting-aware "$TMP/sa.json"
contains "$TMP/out" "80% interval"
contains "$TMP/out" "GPU memory"
contains "$TMP/out" "(setting-aware, simulated)"
# Without it: the list's per-setting inspectors, as before.
ok "$DRIPLE" predict "$TMP/r18.json" --setting V100-P1w2ho-PCIe --setting-aware none --json
contains "$TMP/out" '"source": "trained"'
contains "$TMP/out" '"interval": null'
ok "$DRIPLE" compare "$TMP/r18.json" --setting-aware "$TMP/sa.json" --json
contains "$TMP/out" '"source": "setting-aware"'

# The shipped one (the default): predict and compare --grid give the same numbers for a setting
# (one session computes them for both), and the grid leaves out NVLink where a GPU has none.
if [ -f assets/inspectors/setting-aware.json ]; then
    ok "$DRIPLE" predict samples/graphs/resnet50.json --gpu T4 --workers 8 --ps 2 --network 25GbE --json
    cp "$TMP/out" "$TMP/pred.json"
    contains "$TMP/pred.json" '"source": "setting-aware"'
    ok "$DRIPLE" compare samples/graphs/resnet50.json --grid --workers 8 --ps 2 --json
    cp "$TMP/out" "$TMP/grid.json"
    contains "$TMP/grid.json" '"id": "T4-P2w8ho-25GbE-M2x4"'
    contains "$TMP/grid.json" '"id": "H100-AR8-NVLink"'
    if grep -q '"id": "T4-[A-Za-z0-9]*-NVLink"' "$TMP/grid.json"; then fail "compare --grid: NVLink on a T4"; else pass; fi
    if command -v python3 >/dev/null 2>&1; then
        if python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
g = [r for r in json.load(open(sys.argv[2]))["settings"] if r["id"] == "T4-P2w8ho-25GbE-M2x4"][0]
assert p["derived"]["iteration_ms"] == g["derived"]["iteration_ms"], (p["derived"], g["derived"])
assert p["metrics"] == g["metrics"] and p["interval"]["metrics"] == g["interval"]["metrics"]
for k in ("iteration_ms", "throughput", "memory_gb"):
    assert p["derived"][k] == g["derived"][k] and p["interval"]["derived"][k] == g["interval"]["derived"][k], k' "$TMP/pred.json" "$TMP/grid.json"
        then pass; else fail "predict and compare --grid disagree on T4-P2w8ho-25GbE-M2x4"; fi
    fi
    # its benchmark (make bench): the grid from the cached embedding, every row predicted
    ok "$DRIPLE" bench compare samples/graphs/resnet50.json --grid --runs 2 --json
    contains "$TMP/out" '"grid": true'
    n=$(grep -o '"id": ' "$TMP/grid.json" | wc -l | tr -d " ")
    contains "$TMP/out" "\"settings\": $n, \"n_predicted\": $n,"
fi
ok "$DRIPLE" bench compare samples/graphs/resnet50.json --runs 1
contains "$TMP/out" "from the cached embedding median"
fails 2 "missing GRAPH" "$DRIPLE" bench compare
fails 2 "--runs '0'" "$DRIPLE" bench compare samples/graphs/resnet50.json --runs 0
fails 1 "nowhere.json" "$DRIPLE" bench compare nowhere.json

# Fine-tuned for one setting from its samples (transfer --from a setting-aware inspector): a
# setting-aware file naming the setting and the samples, read by predict --setting-aware.
ok "$DRIPLE" transfer --from "$TMP/sa.json" --dataset "$TMP/base_ds.json" -o "$TMP/tuned.json" \
    --epochs 30 --json
contains "$TMP/out" '"setting": "V100-P1w2ho-PCIe"'
contains "$TMP/out" '"interval_recalibrated": true'
contains "$TMP/out" '"val_after": {"n": '
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["train_loss_after"] < d["train_loss_before"], d
assert d["n_train"] + d["n_val"] > 0 and d["data"] == "simulated"' "$TMP/out"
    then pass; else fail "transfer --from SA: the training loss falls"; fi
fi
contains "$TMP/tuned.json" '"format":"driple-sa-inspector/1"'
contains "$TMP/tuned.json" '"tuned":{"setting":"V100-P1w2ho-PCIe","data":"simulated"'
ok "$DRIPLE" predict "$TMP/r18.json" --setting V100-P1w2ho-PCIe --setting-aware "$TMP/tuned.json" \
    --json
contains "$TMP/out" '"source": "setting-aware"'
contains "$TMP/out" "\"inspector\": \"$TMP/tuned.json\""
contains "$TMP/out" '"iteration_ms": ['
ok "$DRIPLE" predict "$TMP/r18.json" --setting V100-P1w2ho-PCIe --setting-aware "$TMP/tuned.json"
contains "$TMP/out" "(fine-tuned, simulated)"
ok "$DRIPLE" compare "$TMP/r18.json" --setting-aware "$TMP/tuned.json" --json
ok "$DRIPLE" inspector eval "$TMP/tuned.json" --dataset "$TMP/base_ds.json"
contains "$TMP/out" "fine-tuned for V100-P1w2ho-PCIe"
contains "$TMP/out" "iteration_ms"
ok "$DRIPLE" transfer --from "$TMP/sa.json" --setting V100-P1w2ho-PCIe \
    --dataset "$TMP/base_ds.json" -o "$TMP/tuned2.json" --epochs 2
contains "$TMP/out" "fine-tuned for V100-P1w2ho-PCIe"
fails 1 "is for setting 'V100-P1w2ho-PCIe', not 'A100-P1w2ho-NVLink'" "$DRIPLE" transfer \
    --from "$TMP/sa.json" --setting A100-P1w2ho-NVLink --dataset "$TMP/base_ds.json" \
    -o "$TMP/x.json"
fails 1 "--setting fine-tunes a setting-aware inspector" "$DRIPLE" transfer \
    --from "$TMP/base.json" --setting V100-P1w2ho-PCIe --dataset "$TMP/base_ds.json" \
    -o "$TMP/x.json"
# a file that is not there is named, with no hint about per-setting inspectors
fails 1 "nosuch.json: cannot open" "$DRIPLE" transfer --from "$TMP/nosuch.json" \
    --setting V100-P1w2ho-PCIe --dataset "$TMP/base_ds.json" -o "$TMP/x.json"
if grep -q "per-setting inspector transfers" "$TMP/err"; then fail "a missing --from got the per-setting hint"; else pass; fi
fails 2 "unknown option '--mode'" "$DRIPLE" transfer --from "$TMP/sa.json" \
    --dataset "$TMP/base_ds.json" -o "$TMP/x.json" --mode head
fails 2 "needs --from SA.json, --dataset D.json and -o M.json" "$DRIPLE" transfer \
    --from "$TMP/sa.json" -o "$TMP/x.json"
[ -e "$TMP/x.json" ] && fail "a refused transfer wrote its output" || pass

fails 2 "missing --out" "$DRIPLE" dataset sweep
fails 2 "missing --setting ID" "$DRIPLE" dataset extract "$TMP/sw.json" -o "$TMP/x.json"
fails 1 "no row of setting" "$DRIPLE" dataset extract "$TMP/sw.json" --setting T4-P1w9ho-10GbE -o "$TMP/x.json"
# ... which leaves a dataset of no samples: nothing to fine-tune on.
fails 1 "x.json: the dataset has no samples" "$DRIPLE" transfer --from "$TMP/sa.json" \
    --dataset "$TMP/x.json" -o "$TMP/y.json"
fails 2 "several settings need --dir" "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe,T4-P1w9ho-10GbE -o "$TMP/x.json"
fails 2 "-o and --dir together" "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe -o "$TMP/x.json" --dir "$TMP"
fails 1 "no row of setting T4-P1w9ho-10GbE" "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe,T4-P1w9ho-10GbE --dir "$TMP/dsdir"
fails 1 "not a setting id" "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe,nonsense --dir "$TMP/dsdir"
fails 2 "--split: 'models'" "$DRIPLE" train --sweep "$TMP/sw.json" --body "$TMP/base.json" -o "$TMP/x.json" --split models
fails 2 "missing --body" "$DRIPLE" train --sweep "$TMP/sw.json" -o "$TMP/x.json"
fails 2 "--pair-weight '-1'" "$DRIPLE" train --sweep "$TMP/sw.json" --body "$TMP/base.json" \
    -o "$TMP/x.json" --pair-weight -1
fails 1 "needs the names to test on" "$DRIPLE" train --sweep "$TMP/sw.json" --body "$TMP/base.json" -o "$TMP/x.json" --split gpus
printf '{"format":"driple-sa-inspector/1"}' >"$TMP/bad_sa.json"
fails 1 "bad_sa.json" "$DRIPLE" predict "$TMP/r18.json" --gpu T4 --workers 2 --ps 1 --network PCIe --setting-aware "$TMP/bad_sa.json"
finish
