#!/bin/sh
# e2e_model.sh: the inspector commands end to end: the published checkpoint imports, and
# `predict --grouped CASE --inspector imported.json --json` reproduces the reference `raw` of all
# 8 GCN cases within 1e-4 * max(1, max|raw|); then train, transfer, info, compare on a tiny
# dataset, and clear errors with the right exit codes.
. tests/lib.sh
REF=../shared/reference
[ -d "$REF" ] || { echo "e2e_model.sh: $REF is missing" >&2; exit 1; }

ok "$DRIPLE" inspector import-torch "$REF/driple_pretrain_gcn.pkl" --layer gcn -o "$TMP/imported.json"
ok "$DRIPLE" inspector info "$TMP/imported.json" --json
contains "$TMP/out" '"origin": "imported"'
contains "$TMP/out" '"data": "published"'
contains "$TMP/out" '"n_weights": 92236'

# raw of case $2 from cases/$1/expected.json, one number per line.
expected_raw() {
    awk -v want="\"$2\": {" '
        index($0, want) { incase = 1; next }
        incase && /"raw": \[/ { inraw = 1; next }
        inraw && /\]/ { exit }
        inraw { gsub(/[ ,]/, ""); print }' "$REF/cases/$1/expected.json"
}
# raw from predict --json output, one number per line.
predicted_raw() {
    sed -n 's/.*"raw": \[\([^]]*\)\].*/\1/p' "$1" | tr ',' '\n' | tr -d ' '
}
# Compares two columns of numbers: max |a-b| <= 1e-4 * max(1, max|b|).
close_enough() {
    paste "$1" "$2" | awk -F'\t' '
        NF != 2 || $1 == "" || $2 == "" { bad = 1 }
        { n++; d = $1 - $2; if (d < 0) d = -d; if (d > md) md = d; b = $2 < 0 ? -$2 : $2; if (b > mb) mb = b }
        END { tol = 1e-4 * (mb > 1 ? mb : 1); if (n != 12 || bad) { print "count " n " or a missing value"; exit 1 }
              printf "max diff %.3g (tol %.3g)\n", md, tol; exit !(md <= tol) }'
}

# parity LAYER INSPECTOR CASE...: predict --json's raw equals the reference for each case.
parity() {
    layer=$1; insp=$2; shift 2
    for case in "$@"; do
        f="$REF/cases/$layer/$case.grouped.json"
        if "$DRIPLE" predict --grouped "$f" --inspector "$insp" --json >"$TMP/p.json" 2>"$TMP/err"; then
            expected_raw "$layer" "$case" >"$TMP/want"
            predicted_raw "$TMP/p.json" >"$TMP/got"
            if close_enough "$TMP/got" "$TMP/want" >"$TMP/cmp"; then pass
            else fail "parity $layer/$case: $(cat "$TMP/cmp")"; fi
        else
            fail "predict $layer/$case: $(head -c 300 "$TMP/err")"
        fi
    done
}
parity gcn "$TMP/imported.json" sparse100 dense100 chain64 star37 tiny3 single1 huge_tensors100 small_tensors100
# The GIN variant through the reference JSON form of its weights.
ok "$DRIPLE" inspector import-json "$REF/gin_random_weights.json" -o "$TMP/gin.json"
parity gin "$TMP/gin.json" chain64 star37 tiny3 single1

# The JSON output's contract.
ok "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/imported.json" --json
for k in '"graph"' '"batch"' '"setting"' '"inspector"' '"metrics": {"gpu_mem_util": {"idle"' \
         '"gpu_util": {' '"net_rx": {' '"net_tx": {' '"raw": [' '"derived": {"iteration_ms"' \
         '"iteration_ms": "(gpu_util.idle + gpu_util.active) / bursts.iterations_per_burst_cycle"' \
         '"bursts": {"iterations_per_burst_cycle": 1, "bursts_span_iterations": false'; do
    contains "$TMP/out" "$k"
done
ok "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/imported.json"
contains "$TMP/out" "iteration_ms     = (gpu_util.idle + gpu_util.active) / bursts.iterations_per_burst_cycle"

# A workload graph: coarsened, features at the asked batch size.
ok "$DRIPLE" predict tests/data/graph/small.json --inspector "$TMP/imported.json" --batch 16 --groups 4 --json
contains "$TMP/out" '"batch": 16, "n_groups": 4'
fails 1 "no op is placed on a GPU" "$DRIPLE" predict tests/data/graph/nogpu.json --inspector "$TMP/imported.json"

# Errors: file and place named, exit 1; usage errors exit 2.
fails 1 "nope.json" "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/nope.json"
head -c 3000 "$TMP/imported.json" >"$TMP/cut.json"
fails 1 "cut.json:" "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/cut.json"
sed 's/"n_feat":\t3/"n_feat":\t4/' "$TMP/imported.json" >"$TMP/feat.json"
fails 1 'feat.json:$.architecture.n_feat' "$DRIPLE" inspector info "$TMP/feat.json"
fails 2 "give one of --inspector M, --setting ID or --gpu NAME" "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json"
fails 2 "--batch needs a GRAPH" "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/imported.json" --batch 8
printf 'not a zip at all, just some text padding it out' >"$TMP/junk.pkl"
fails 1 "junk.pkl: not a zip archive" "$DRIPLE" inspector import-torch "$TMP/junk.pkl" -o "$TMP/x.json"
fails 1 "driple_pretrain_gcn.pkl" "$DRIPLE" inspector import-torch "$REF/driple_pretrain_gcn.pkl" --layer gin -o "$TMP/x.json"
fails 2 "unknown subcommand 'frob'" "$DRIPLE" inspector frob

# A tiny dataset (3-group graphs, labels a function of the features): train, transfer, info.
mk_ds() { # $1 file, $2 setting, $3 label offset
    {
        printf '{"format": "driple-dataset/1", "setting": "%s", "outputs": ["gpu_mem_util.idle", "gpu_mem_util.active", "gpu_mem_util.peak", "gpu_util.idle", "gpu_util.active", "gpu_util.peak", "net_rx.idle", "net_rx.active", "net_rx.peak", "net_tx.idle", "net_tx.active", "net_tx.peak"], "samples": [' "$2"
        i=0
        while [ $i -lt 24 ]; do
            a=$((i % 7 + 1)); b=$((i % 5 + 1)); m=$((i % 4))
            l=$(awk -v a=$a -v b=$b -v o="$3" 'BEGIN { printf "%g", a * 10 + b + o }')
            [ $i -gt 0 ] && printf ','
            printf '{"graph": "g%d", "model": "m%d", "batch": 32, "job": {"optimizer": "sgd"}, "labels": [%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s], "source": {"kind": "simulated", "where": "e2e_model.sh"}, "grouped": {"groups": [[%d, 3, 0.5], [%d, 2, 0.25], [1, 1, 0.1]], "edges": [[0, 1], [1, 2]]}}' \
                $i $m "$l" "$l" "$l" "$l" "$l" "$l" "$l" "$l" "$l" "$l" "$l" "$l" $a $b
            i=$((i + 1))
        done
        printf ']}\n'
    } >"$1"
}
mk_ds "$TMP/a.json" "V100-P1w2ho-PCIe" 0
mk_ds "$TMP/b.json" "A100-P1w2ho-25GbE" 5
ok "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/base.json" --hidden 8 --epochs 5 --seed 2 --json
contains "$TMP/out" '"origin": "scratch"'
contains "$TMP/out" '"test": {"mape": ['
ok "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/base_m.json" --hidden 8 --epochs 3 --split models
contains "$TMP/out" "hold-out-models split"
contains "$TMP/out" "gpu_util.active"
ok "$DRIPLE" transfer --from "$TMP/base.json" --dataset "$TMP/b.json" -o "$TMP/tr.json" --epochs 5 --vs-scratch --json
contains "$TMP/out" '"transfer": {"origin": "transfer", "mode": "head"'
contains "$TMP/out" '"speedup"'
contains "$TMP/tr.json" '"base":	"base.json"'
ok "$DRIPLE" inspector info "$TMP/tr.json"
contains "$TMP/out" "origin: transfer from base.json / V100-P1w2ho-PCIe, mode head"
ok "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/base_l.json" --hidden 8 --epochs 2 --features log --max-layers 1
ok "$DRIPLE" inspector info "$TMP/base_l.json" --json
contains "$TMP/out" '"features": "log"'
contains "$TMP/base_l.json" '"max_layers":	1'
fails 2 "--rule: 'deep'" "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/x.json" --rule deep
ok "$DRIPLE" inspector eval "$TMP/tr.json" --dataset "$TMP/b.json" --json
contains "$TMP/out" '"n_samples": 24'
contains "$TMP/out" '"eval": {"mape": ['
fails 1 "missing.json" "$DRIPLE" inspector eval "$TMP/tr.json" --dataset "$TMP/missing.json"
fails 2 "needs --dataset D.json and -o M.json" "$DRIPLE" train --dataset "$TMP/a.json"
fails 1 "missing.json" "$DRIPLE" train --dataset "$TMP/missing.json" -o "$TMP/x.json"
fails 2 "--split: 'sideways'" "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/x.json" --split sideways
# Recipes and target transforms: driple-c (the default) stores log outputs, paper linear ones.
ok "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/rc.json" --hidden 8 --epochs 3 --json
contains "$TMP/out" '"recipe": "driple-c", "target": "log"'
contains "$TMP/out" '"mape_floor": 1, '
contains "$TMP/rc.json" '"transform":	"log"'
ok "$DRIPLE" inspector info "$TMP/rc.json"
contains "$TMP/out" "gpu_util.active"
contains "$TMP/out" " log "
ok "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/rp.json" --recipe paper --hidden 8 --epochs 2 --max-layers 1
contains "$TMP/out" "recipe paper, raw features, max targets"
contains "$TMP/out" "MAPE: mean |pred - label| / |label| over labels >= 1 (ms, %, MB/s)"
contains "$TMP/rp.json" '"transform":	"linear"'
ok "$DRIPLE" transfer --from "$TMP/rc.json" --dataset "$TMP/b.json" -o "$TMP/rct.json" --epochs 3 --json
contains "$TMP/rct.json" '"transform":	"log"'
ok "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/rct.json" --json
contains "$TMP/out" '"metrics"'
ok "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/rr.json" --target range --lr-decay 0.5 --lr-plateau 1 --weight-decay 0 --hidden 8 --epochs 2
contains "$TMP/out" "range targets"
fails 2 "--recipe: 'fast' is not driple-c or paper" "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/x.json" --recipe fast
fails 2 "--target: 'sqrt' is not max, range, log or base" "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/x.json" --target sqrt
fails 2 "--target base is for transfer" "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/x.json" --target base
fails 2 "--lr-decay" "$DRIPLE" train --dataset "$TMP/a.json" -o "$TMP/x.json" --lr-decay 2

# compare: every setting of a list side by side; the two sharing a body need one GNN pass.
cat >"$TMP/settings.json" <<EOF
{"format": "driple-settings/1", "settings": [
 {"id": "V100-P1w2ho-PCIe", "gpu": "V100", "ps": 1, "workers": 2, "placement": "homo", "network": "PCIe", "inspector": "base.json"},
 {"id": "A100-P1w2ho-25GbE", "gpu": "A100", "ps": 1, "workers": 2, "placement": "homo", "network": "25GbE", "inspector": "tr.json"},
 {"id": "H100-P1w1ho-100GbE", "gpu": "H100", "ps": 1, "workers": 1, "placement": "homo", "network": "100GbE"}]}
EOF
ok "$DRIPLE" compare --grouped "$REF/cases/gcn/tiny3.grouped.json" --settings "$TMP/settings.json" --json
contains "$TMP/out" '"n_predicted": 2, "gnn_passes": 1'
contains "$TMP/out" '"id": "H100-P1w1ho-100GbE"'
ok "$DRIPLE" compare tests/data/graph/small.json --batch 8 --settings "$TMP/settings.json" --setting-aware none
contains "$TMP/out" "2 of 3 settings predicted with 1 GNN pass"
ok "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --setting A100-P1w2ho-25GbE --settings "$TMP/settings.json" --json
contains "$TMP/out" '"setting": "A100-P1w2ho-25GbE"'
contains "$TMP/out" '"workers": 2'
fails 1 "no setting 'X1'" "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --setting X1 --settings "$TMP/settings.json"

# Net per iteration is exact: a worker pulls every variable and pushes every gradient, 4 B each
# (fp32 on the wire, mixed precision too): 2 x the sum of the zoo graph's parameters x 4 B, which
# is also what the simulator moves per worker on PCIe.
ok "$DRIPLE" zoo build resnet50 -o "$TMP/r50.json"
P=$("$DRIPLE" zoo list | awk '$1 == "resnet50" { print $5 }')
[ "$P" = 25610152 ] && pass || fail "zoo list: resnet50 has $P parameters, expected 25610152"
ok "$DRIPLE" predict "$TMP/r50.json" --inspector "$TMP/base.json" --json
contains "$TMP/out" "\"parameters\": $P, \"net_mb_per_iter\": 204.881216,"
ok "$DRIPLE" predict "$TMP/r50.json" --inspector "$TMP/base.json"
contains "$TMP/out" "network per iteration 204.9 MB per worker (2 x 25610152 parameters x 4 B)"
ok "$DRIPLE" simulate "$TMP/r50.json" --gpu V100-PCIe-16GB --ps 1 --workers 2 --network PCIe --precision mixed --iterations 2 --json
B=$(sed -n 's/.*"bytes_per_iter": \([0-9.e+]*\).*/\1/p' "$TMP/out")
awk -v b="$B" -v p="$P" 'BEGIN { exit !(b == 2 * 2 * p * 4) }' && pass || fail "simulated bytes_per_iter $B != 2 workers x 2 x $P x 4"
ok "$DRIPLE" compare "$TMP/r50.json" --settings "$TMP/settings.json" --json
contains "$TMP/out" '"net_mb_per_iter": 204.881216'
ok "$DRIPLE" predict --grouped "$REF/cases/gcn/tiny3.grouped.json" --inspector "$TMP/base.json" --json
contains "$TMP/out" '"parameters": null, "net_mb_per_iter": null'

# Bad inputs: the graph file is named when grouping fails (not only the graph's name); a list
# in which no setting can be predicted is an error, not a table of dashes; directories are said.
fails 1 "tests/data/graph/nogpu.json: nogpu: no op is placed on a GPU" "$DRIPLE" predict tests/data/graph/nogpu.json --inspector "$TMP/base.json"
fails 1 "tests/data/graph/nogpu.json: nogpu:" "$DRIPLE" compare tests/data/graph/nogpu.json --settings "$TMP/settings.json"
cat >"$TMP/none.json" <<EOF
{"format": "driple-settings/1", "settings": [
 {"id": "H100-P1w1ho-100GbE", "gpu": "H100", "ps": 1, "workers": 1, "placement": "homo", "network": "100GbE"}]}
EOF
fails 1 "none.json: no setting could be predicted" "$DRIPLE" compare tests/data/graph/small.json --settings "$TMP/none.json" --setting-aware none
fails 1 "tests/data: is a directory" "$DRIPLE" predict tests/data --inspector "$TMP/base.json"
fails 1 "tests/data:" "$DRIPLE" predict tests/data/graph/small.json --inspector tests/data
finish
