#!/bin/sh
# make_assets.sh: the shipped inspectors, reproducibly from seeds (`make assets`).
#  1. one simulated sweep (driple dataset sweep): every zoo model x optimizer x 12 batch sizes
#     and GEN generated architectures x 2 batch sizes, in fp32 and mixed precision, each on every
#     setting of assets/settings/default.json (all zoo graphs, the first QUOTA generated ones)
#     and on NRANDOM settings drawn from the catalog's GPUs, 1 .. 64 workers, PS or all-reduce,
#     TensorFlow or PyTorch, every network; jobs that do not fit a GPU's memory are kept out;
#  2. a per-setting dataset for every setting of the list, its rows of the sweep
#     (driple dataset extract);
#  3. a base inspector trained from scratch on one setting (driple train --recipe driple-c,
#     notes/accuracy.md), on a random 60/20/20 split;
#  4. a transferred inspector for every other setting (driple transfer: the base's GNN body is
#     kept, only the head learns; the file stores what differs and names the base);
#  5. the setting-aware inspector (driple train --sweep: the base's body, a head reading the
#     graph's profile and the setting; shipped as inspectors/setting-aware.json), on a random
#     split of the sweep's graphs, and again holding out whole model families, whole GPUs
#     (SA_GPUS) and whole networks (SA_NETS) to measure what it never saw (not shipped);
#  6. the same base and transfers again on a split that holds out whole model families
#     (HOLDOUT=1, the default; not shipped);
#  7. notes/assets.md: errors per metric and setting, the setting-aware inspector's per output
#     and per hold-out (MAPE, R^2, coverage of its 80% interval), and the time each step took.
# Every label is SIMULATED (notes/calibration.md), not measured.
# Environment: JOBS (threads, 2), RECIPE (driple-c), EPOCHS / PATIENCE / TEPOCHS (empty: the
# recipe's), BASE (the base setting, V100-P1w2ho-PCIe), SEED (1), GEN (generated architectures,
# 2500), QUOTA (generated graphs per list setting, 400), NRANDOM (random settings per graph, 6),
# SA_MEMBERS (5), SA_EPOCHS (120), SA_GPUS / SA_NETS (held out), HOLDOUT (1), ONLY
# (space-separated setting ids to transfer to; default all); DS, LOG, OUT, NOTES (paths);
# NOTES_ONLY=1 rewrites notes/assets.md from the logs of the last run.
set -eu
BIN=${1:-build/driple}
JOBS=${JOBS:-2}
RECIPE=${RECIPE:-driple-c}
EPOCHS=${EPOCHS:-}
PATIENCE=${PATIENCE:-}
TEPOCHS=${TEPOCHS:-}
BASE=${BASE:-V100-P1w2ho-PCIe}
SEED=${SEED:-1}
GEN=${GEN:-2500}
QUOTA=${QUOTA:-400}
NRANDOM=${NRANDOM:-6}
SA_MEMBERS=${SA_MEMBERS:-5}
SA_EPOCHS=${SA_EPOCHS:-120}
SA_GPUS=${SA_GPUS:-A100-40GB-SXM,T4,RTX3090,H200,V100-SXM2-32GB,L4}
SA_VAL_GPUS=${SA_VAL_GPUS:-A10,RTX4090,P100-SXM2}
SA_NETS=${SA_NETS:-25GbE,IB-EDR}
SA_VAL_NETS=${SA_VAL_NETS:-40GbE}
HOLDOUT=${HOLDOUT:-1}
SETTINGS=assets/settings/default.json
DS=${DS:-build/assets/datasets}
LOG=${LOG:-build/assets/logs}
OUT=${OUT:-assets/inspectors}
NOTES=${NOTES:-notes/assets.md}
TOPT=""
[ -n "$EPOCHS" ] && TOPT="$TOPT --epochs $EPOCHS"
[ -n "$PATIENCE" ] && TOPT="$TOPT --patience $PATIENCE"
XOPT=""
[ -n "$TEPOCHS" ] && XOPT="$XOPT --epochs $TEPOCHS"
[ -n "$PATIENCE" ] && XOPT="$XOPT --patience $PATIENCE"

[ -x "$BIN" ] || { echo "make_assets: $BIN not built (run make)" >&2; exit 1; }
mkdir -p "$DS" "$LOG" "$OUT"
# Run a private copy: a rebuild of the tree during the run must not swap the binary under us.
TMPBIN=$(mktemp -d)
trap 'rm -rf "$TMPBIN"' EXIT
cp "$BIN" "$TMPBIN/driple"
BIN=$TMPBIN/driple
now() { date +%s; }

if [ "${NOTES_ONLY:-0}" != 1 ]; then
echo "make_assets: 1/5 the sweep (simulated) -> $DS/sweep.json" >&2
t0=$(now)
"$BIN" dataset sweep --settings "$SETTINGS" --out "$DS/sweep.json" --generated "$GEN" \
    --gen-batches 2 --quota "$QUOTA" --random "$NRANDOM" --allreduce --pytorch --jobs "$JOBS" \
    --seed "$SEED" --json >"$LOG/sweep.json"
ids=${ONLY:-$(sed -n 's/^ *"id": *"\([^"]*\)".*/\1/p' "$SETTINGS")}
# The per-setting datasets: each list setting's rows of the sweep.
echo "{\"settings\": [" >"$LOG/datasets.json"
sep=""
for id in $BASE $ids; do
    "$BIN" dataset extract "$DS/sweep.json" --setting "$id" -o "$DS/$id.json" >"$LOG/extract.txt"
    n=$(sed -n 's/.*: \([0-9]*\) samples of.*/\1/p' "$LOG/extract.txt")
    printf '%s{"id": "%s", "samples": %s}' "$sep" "$id" "${n:-0}" >>"$LOG/datasets.json"
    sep=", "
done
echo "]}" >>"$LOG/datasets.json"
t1=$(now)
# base_and_transfers SPLIT OUTDIR LOGPREFIX
base_and_transfers() {
    echo "make_assets: base inspector $BASE from scratch (recipe $RECIPE, $1 split)" >&2
    # shellcheck disable=SC2086
    "$BIN" train --dataset "$DS/$BASE.json" -o "$2/$BASE.json" --recipe "$RECIPE" --split "$1" \
        --seed "$SEED" $TOPT --json >"$3train_$BASE.json"
    echo "make_assets: transfer to the other settings ($1 split)" >&2
    for id in $ids; do
        [ "$id" = "$BASE" ] && continue
        [ -f "$DS/$id.json" ] || { echo "make_assets: no dataset for $id" >&2; exit 1; }
        # shellcheck disable=SC2086
        "$BIN" transfer --from "$2/$BASE.json" --dataset "$DS/$id.json" -o "$2/$id.json" \
            --recipe "$RECIPE" --split "$1" --seed "$SEED" $XOPT --json >"$3transfer_$id.json"
        echo "  $id" >&2
    done
}
echo "make_assets: 2/5 base and transfers (random split) -> $OUT" >&2
base_and_transfers random "$OUT" "$LOG/"
t2=$(now)
t3=$t2
if [ "$HOLDOUT" = 1 ]; then
    echo "make_assets: 3/5 the same holding out whole model families -> $LOG/holdout (not shipped)" >&2
    mkdir -p "$LOG/holdout"
    base_and_transfers models "$LOG/holdout" "$LOG/holdout/"
    t3=$(now)
fi
# The setting-aware inspector: shipped (random split), then holding out families, GPUs and
# networks (fewer members: measurements, not shipped).
echo "make_assets: 4/5 the setting-aware inspector -> $OUT/setting-aware.json" >&2
"$BIN" train --sweep "$DS/sweep.json" --body "$OUT/$BASE.json" -o "$OUT/setting-aware.json" \
    --members "$SA_MEMBERS" --epochs "$SA_EPOCHS" --seed "$SEED" --json >"$LOG/sa_random.json"
t4=$(now)
if [ "$HOLDOUT" = 1 ]; then
    echo "make_assets: 5/5 the setting-aware inspector holding out families, GPUs, networks" >&2
    "$BIN" train --sweep "$DS/sweep.json" --body "$OUT/$BASE.json" -o "$LOG/holdout/sa_families.json" \
        --members 3 --epochs "$SA_EPOCHS" --seed "$SEED" --split families --json >"$LOG/sa_families.json"
    "$BIN" train --sweep "$DS/sweep.json" --body "$OUT/$BASE.json" -o "$LOG/holdout/sa_gpus.json" \
        --members 3 --epochs "$SA_EPOCHS" --seed "$SEED" --split gpus --test-held "$SA_GPUS" \
        --val-held "$SA_VAL_GPUS" --json >"$LOG/sa_gpus.json"
    "$BIN" train --sweep "$DS/sweep.json" --body "$OUT/$BASE.json" -o "$LOG/holdout/sa_networks.json" \
        --members 3 --epochs "$SA_EPOCHS" --seed "$SEED" --split networks --test-held "$SA_NETS" \
        --val-held "$SA_VAL_NETS" --json >"$LOG/sa_networks.json"
fi
t5=$(now)
echo "$t0 $t1 $t2 $t3 $t4 $t5" >"$LOG/times.txt"
fi
read t0 t1 t2 t3 t4 t5 <"$LOG/times.txt"

# notes/assets.md from the logs (python3 reads the JSON; without it the logs stay in $LOG).
if command -v python3 >/dev/null 2>&1; then
    python3 - "$LOG" "$BASE" "$((t1 - t0))" "$((t2 - t1))" "$((t3 - t2))" "$RECIPE" \
        "$SEED" "$GEN" "$QUOTA" "$NRANDOM" "$((t4 - t3))" "$((t5 - t4))" >"$NOTES" <<'EOF'
import glob, json, math, os, sys
(log, base, t_ds, t_main, t_hold, recipe, seed, gen, quota, n_random, t_sa,
 t_sa_hold) = sys.argv[1:]
names = ["gpu_mem_util.idle", "gpu_mem_util.active", "gpu_mem_util.peak", "gpu_util.idle",
         "gpu_util.active", "gpu_util.peak", "net_rx.idle", "net_rx.active", "net_rx.peak",
         "net_tx.idle", "net_tx.active", "net_tx.peak"]
groups = ["gpu_mem_util", "gpu_util", "net_rx", "net_tx"]

def load_rows(d):
    rows = []
    paths = [os.path.join(d, "train_%s.json" % base)] + sorted(glob.glob(os.path.join(d, "transfer_*.json")))
    for path in paths:
        if not os.path.exists(path):
            continue
        j = json.load(open(path))
        rows.append((j.get("setting", "?"), j.get("scratch") or j.get("transfer") or {}))
    return rows

def mean(v):
    v = [x for x in v if x is not None and math.isfinite(x)]
    return sum(v) / len(v) if v else float("nan")

def median(v):
    v = sorted(x for x in v if x is not None and math.isfinite(x))
    if not v:
        return float("nan")
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

def f(x, fmt):
    return "n/a" if x is None or not math.isfinite(x) else fmt % x

def summary(title, rows):
    print("### %s\n" % title)
    print("| setting | origin | samples (train/val/test) | seconds | epochs | val MAPE | test MAPE | "
          "test R^2 (median) | " + " | ".join("R^2 " + g for g in groups) + " |")
    print("|" + "---|" * (8 + len(groups)))
    for sid, r in rows:
        t = r.get("test") or {}
        v = r.get("val") or {}
        r2 = t.get("r2") or [None] * 12
        print("| %s | %s | %s/%s/%s | %s | %s | %s | %s | %s | %s |" % (
            sid, r.get("origin", "?"), r.get("n_train", "?"), r.get("n_val", "?"), r.get("n_test", "?"),
            f(r.get("seconds"), "%.1f"), r.get("epochs", "?"), f(mean(v.get("mape") or []), "%.1f"),
            f(mean(t.get("mape") or []), "%.1f"), f(median(r2), "%.2f"),
            " | ".join(f(median(r2[3 * k:3 * k + 3]), "%.2f") for k in range(4))))
    allm = [mean((r.get("test") or {}).get("mape") or []) for _, r in rows]
    allr = [median((r.get("test") or {}).get("r2") or []) for _, r in rows]
    print("\nOver the %d inspectors: median of the mean test MAPE %s%%, median of the median test "
          "R^2 %s.\n" % (len(rows), f(median(allm), "%.1f"), f(median(allr), "%.2f")))

def per_metric(title, rows, key, fmt):
    print("### %s\n" % title)
    print("| setting | " + " | ".join(names) + " |")
    print("|" + "---|" * (1 + len(names)))
    for sid, r in rows:
        t = (r.get("test") or {}).get(key) or [None] * 12
        print("| %s | %s |" % (sid, " | ".join(f(x, fmt) for x in t)))
    print()

def sa_section():
    runs = [(k, os.path.join(log, "sa_%s.json" % k)) for k in ("random", "families", "gpus", "networks")]
    runs = [(k, json.load(open(p))) for k, p in runs if os.path.exists(p)]
    if not runs:
        return
    print("### The setting-aware inspector\n")
    print("One inspector for every setting (`inspectors/setting-aware.json`, shipped: random split "
          "of the sweep's graphs): the base's GNN body, and an ensemble of MLP heads reading the "
          "graph's profile and the setting, predicting the 12 metrics, the iteration time and the "
          "memory footprint with an 80% interval. Trained again holding out whole model families, "
          "whole GPUs and whole networks (3 members each, not shipped). Test part of each split; "
          "`12 metrics` is the mean and the median of their MAPE; coverage is the share of test "
          "labels inside the 80% interval (median over the 14 outputs).\n")
    print("| split | held out | rows (train/val/test) | seconds | 12 metrics MAPE mean / median | "
          "iteration_ms MAPE | memory_gb MAPE | coverage (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for k, j in runs:
        o = j.get("outputs") or []
        m = [x.get("mape") for x in o]
        print("| %s | %s | %s/%s/%s | %s | %s / %s | %s | %s | %s |" % (
            k, j.get("held") or "-", j.get("n_train"), j.get("n_val"), j.get("n_test"),
            f(j.get("seconds"), "%.0f"), f(j.get("test_mape_mean"), "%.1f"),
            f(j.get("test_mape_median"), "%.1f"), f(m[12] if len(m) > 12 else None, "%.1f"),
            f(m[13] if len(m) > 13 else None, "%.1f"), f(j.get("coverage_median"), "%.1f")))
    print()
    print("| output | " + " | ".join("%s MAPE / R^2 / coverage" % k for k, _ in runs) + " |")
    print("|" + "---|" * (1 + len(runs)))
    for i in range(14):
        cells = []
        for k, j in runs:
            o = (j.get("outputs") or [{}] * 14)[i]
            cells.append("%s / %s / %s" % (f(o.get("mape"), "%.1f"), f(o.get("r2"), "%.2f"),
                                           f(o.get("coverage"), "%.0f")))
        name = ((runs[0][1].get("outputs") or [{}] * 14)[i]).get("name", "?")
        print("| %s | %s |" % (name, " | ".join(cells)))
    print()

ds = json.load(open(os.path.join(log, "datasets.json")))
sweep = json.load(open(os.path.join(log, "sweep.json")))
rows = load_rows(log)
hold = load_rows(os.path.join(log, "holdout"))
print("# Shipped inspectors (`make assets`)\n")
print("Generated by `assets/make_assets.sh` (recipe `%s`, seed %s). **Every label is simulated** by "
      "driple's training simulator (notes/calibration.md), not measured on a cluster. The sweep "
      "(`driple dataset sweep`): %s graphs (every zoo model x optimizer x 12 batch sizes, and %s "
      "generated architectures x 2 batch sizes, in fp32 and mixed precision) and %s rows (%s out "
      "of memory, left out of training): each graph on every list setting of its precision (every "
      "zoo graph, the first %s generated ones) and on %s random settings. Per-setting datasets: "
      "each list setting's rows, up to %d jobs (`driple dataset extract`). The per-setting "
      "inspectors are trained on a random 60/20/20 split; the same base and transfers are trained "
      "again on a split that holds out whole model families (`--split models`: every size variant "
      "of a held-out architecture is held out with it; generated architectures always train) to "
      "measure how they predict an architecture they never saw (not shipped). The recipe and the "
      "experiments behind it: notes/accuracy.md.\n"
      % (recipe, seed, sweep.get("graphs"), gen, sweep.get("rows"), sweep.get("oom"), quota,
         n_random, max(s["samples"] for s in ds["settings"])))
print("Times on this machine (2 shared cores): sweep and datasets %s s; base (%s, from scratch) "
      "and %d transfers, random split: %s s; the same holding out model families: %s s; the "
      "setting-aware inspector: %s s, and its three hold-outs: %s s.\n"
      % (t_ds, base, len(rows) - 1, t_main, t_hold, t_sa, t_sa_hold))
sa_section()
print("Metrics (per output, on the test part): MAPE = mean |pred - label| / |label| over labels "
      ">= 1 (ms, %, MB/s; smaller ones are immaterial and would dominate), in %; R^2 = 1 - "
      "SSE / SS about the test mean (1 perfect, 0 = predicting the mean, negative worse; n/a "
      "when the test labels are constant, e.g. a network peak at the link's capacity for every "
      "job); `val MAPE` and `test MAPE` are means over the 12 outputs; `test R^2` is the median "
      "over the 12 outputs and `R^2 <group>` the median of its idle, active and peak (R^2 is "
      "unbounded below: one output whose test labels barely vary would swamp a mean; the "
      "per-metric tables below show every value).\n")
summary("Shipped (random split)", rows)
if hold:
    summary("Holding out whole model families (not shipped)", hold)
per_metric("Shipped: test MAPE (%) per metric", rows, "mape", "%.1f")
per_metric("Shipped: test R^2 per metric", rows, "r2", "%.2f")
if hold:
    per_metric("Holding out model families: test MAPE (%) per metric", hold, "mape", "%.1f")
    per_metric("Holding out model families: test R^2 per metric", hold, "r2", "%.2f")
EOF
    echo "make_assets: wrote $NOTES" >&2
else
    echo "make_assets: python3 not found; the logs are in $LOG (notes/assets.md not written)" >&2
fi
echo "make_assets: done in $((t5 - t0)) s; inspectors in $OUT" >&2
