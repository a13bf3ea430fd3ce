#!/bin/sh
# e2e_explain.sh: `driple explain` and `driple bench explain` end to end: ranked JSON sorted by
# importance, SVG/DOT/PNG renderings, --setting through a setting list, determinism, and bad
# input (missing inspector, graph or setting, unknown metric or method, unwritable output).
. tests/lib.sh
REF=../shared/reference
G=tests/data/graph/small.json

# An inspector: the published GCN checkpoint imported through the CLI (import-torch, or the JSON
# dump through import-json).
INSP="$TMP/insp.json"
"$DRIPLE" inspector import-torch "$REF/driple_pretrain_gcn.pkl" -o "$INSP" >/dev/null 2>&1 ||
    "$DRIPLE" inspector import-json "$REF/gcn_pretrained_weights.json" -o "$INSP" >/dev/null 2>&1
if [ ! -s "$INSP" ]; then
    fail "cannot make an inspector with 'driple inspector import-torch|import-json'"
    finish
    exit 1
fi

# A 48-op chain-and-skip graph on the GPU with varied op types, written as driple-graph/1.
BIG="$TMP/big.json"
awk 'BEGIN {
    split("Conv2D Relu FusedBatchNorm Conv2DBackpropFilter Conv2DBackpropInput MatMul AddV2 ReluGrad", t, " ");
    printf "{\"format\": \"driple-graph/1\", \"name\": \"big\", \"framework\": \"tensorflow\", \"batch\": 8, \"nodes\": [\n";
    for (i = 0; i < 48; i++) {
        inp = "";
        if (i > 0) inp = "\"n" (i - 1) "\"";
        if (i > 3 && i % 4 == 0) inp = inp ", \"n" (i - 4) "\"";
        printf "%s{\"name\": \"n%d\", \"op\": \"%s\", \"device\": \"/device:GPU:0\", \"inputs\": [%s], \"shape\": [-1, %d, 16], \"dtype\": \"float32\"}\n", (i ? "," : ""), i, t[i % 8 + 1], inp, 4 + (i * 7) % 29;
    }
    printf "]}\n";
}' >"$BIG"

# --- the command ---
ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --json
cp "$TMP/out" "$TMP/a.json"
contains "$TMP/a.json" '"metric": "gpu_util.active"'
contains "$TMP/a.json" '"method": "grad"'
contains "$TMP/a.json" '"op_types": [{"op": '
contains "$TMP/a.json" '"members": ["'
# Ten groups, importances non-increasing, summing to 1.
n=$(grep -o '{"id": [0-9]*, "rank"' "$TMP/a.json" | wc -l)
[ "$n" -eq 10 ] && pass || fail "expected 10 groups, got $n"
grep -o '"rank": [0-9]*, "importance": [-0-9.e]*' "$TMP/a.json" | sed 's/.*importance": //' >"$TMP/imp"
if awk 'NR > 1 && $1 > prev + 1e-12 { bad = 1 } { prev = $1; s += $1 } END { exit bad || s < 0.999999 || s > 1.000001 }' "$TMP/imp"
then pass; else fail "importances not sorted or not summing to 1: $(tr '\n' ' ' <"$TMP/imp")"; fi
# Deterministic: the same JSON twice.
ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --json
cmp -s "$TMP/out" "$TMP/a.json" && pass || fail "explain --json differs between runs"

ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --method occlusion --metric iteration_time --json
contains "$TMP/out" '"metric": "iteration_time"'
contains "$TMP/out" '"metric_formula": "gpu_util.idle + gpu_util.active"'
contains "$TMP/out" '"method": "occlusion"'

ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --metric net_tx.peak
contains "$TMP/out" "net_tx.peak = "
contains "$TMP/out" "share of net_tx.peak"

# --- renderings ---
ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --svg "$TMP/e.svg"
n=$(grep -o 'class="node"' "$TMP/e.svg" | wc -l)
[ "$n" -eq 10 ] && pass || fail "SVG holds $n nodes, expected 10"
contains "$TMP/e.svg" "</svg>"
ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --dot "$TMP/e.dot" --layout sfdp
contains "$TMP/e.dot" "g9"
ok "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --png "$TMP/e.png"
head -c 4 "$TMP/e.png" | od -An -c | grep -q 'P   N   G' && pass || fail "PNG magic missing"

# A grouped graph directly (no op drill-down).
ok "$DRIPLE" explain --grouped "$REF/cases/gcn/sparse100.grouped.json" --inspector "$INSP" --json
contains "$TMP/out" '"n_groups": 100'

# --- through a setting list ---
cat >"$TMP/settings.json" <<EOF
{"format": "driple-settings/1", "settings": [
 {"id": "V100-P1w2ho-PCIe", "gpu": "V100-PCIe-16GB", "ps": 1, "workers": 2, "placement": "homo",
  "network": "PCIe", "machines": 1, "precision": "fp32", "inspector": "insp.json"},
 {"id": "V100-P1w4ho-PCIe", "gpu": "V100-PCIe-16GB", "ps": 1, "workers": 4, "placement": "homo",
  "network": "PCIe", "machines": 1, "precision": "fp32", "inspector": "missing.json"}]}
EOF
ok "$DRIPLE" explain "$BIG" --setting V100-P1w2ho-PCIe --settings "$TMP/settings.json" --groups 10 --json
contains "$TMP/out" '"setting": "V100-P1w2ho-PCIe"'
fails 1 "no setting 'NOPE'" "$DRIPLE" explain "$BIG" --setting NOPE --settings "$TMP/settings.json"
# the per-setting inspectors (as predict with --setting-aware none finds them)
fails 1 "missing.json does not exist" "$DRIPLE" explain "$BIG" --setting V100-P1w4ho-PCIe --settings "$TMP/settings.json" --setting-aware none

# --- bad input ---
fails 1 "$TMP/nonexistent.json" "$DRIPLE" explain "$BIG" --inspector "$TMP/nonexistent.json"
fails 1 "$TMP/nope.json" "$DRIPLE" explain "$TMP/nope.json" --inspector "$INSP"
fails 2 "unknown metric 'bogus'" "$DRIPLE" explain "$BIG" --inspector "$INSP" --metric bogus
fails 2 "unknown method 'shap'" "$DRIPLE" explain "$BIG" --inspector "$INSP" --method shap
fails 2 "exactly one of --inspector" "$DRIPLE" explain "$BIG"
fails 2 "exactly one of --inspector" "$DRIPLE" explain "$BIG" --inspector "$INSP" --setting X
fails 2 "missing GRAPH" "$DRIPLE" explain --inspector "$INSP"
fails 2 "one of --svg, --png and --dot" "$DRIPLE" explain "$BIG" --inspector "$INSP" --svg a.svg --dot a.dot
fails 2 "unknown layout 'circo'" "$DRIPLE" explain "$BIG" --inspector "$INSP" --layout circo
fails 1 "/nonexistent-dir/x.svg" "$DRIPLE" explain "$BIG" --inspector "$INSP" --groups 10 --svg /nonexistent-dir/x.svg
fails 1 "no op is placed on a GPU" "$DRIPLE" explain tests/data/graph/nogpu.json --inspector "$INSP"
fails 1 "tests/data/graph/truncated.json:" "$DRIPLE" explain tests/data/graph/truncated.json --inspector "$INSP"
fails 2 "--batch '0'" "$DRIPLE" explain "$BIG" --inspector "$INSP" --batch 0
# Features at the loader's limit on a complete graph of 10 groups overflow the network's
# gradient: an error naming the file and the group. (On a 3-group chain the gradient stays
# finite, and matches finite differences: 8.15e26.)
{
    printf '%s\n' '{"format": "driple-grouped/1", "graph": "max", "groups": ['
    i=0
    while [ $i -lt 10 ]; do
        sep=,; [ $i -eq 9 ] && sep=
        printf '{"tensor_size": 1e30, "ops": 1e30, "type_weight": 1e30}%s\n' "$sep"
        i=$((i + 1))
    done
    printf '], "edges": ['
    i=0; sep=
    while [ $i -lt 10 ]; do
        j=$((i + 1))
        while [ $j -lt 10 ]; do printf '%s[%d, %d]' "$sep" $i $j; sep=,; j=$((j + 1)); done
        i=$((i + 1))
    done
    printf ']}\n'
} >"$TMP/max.json"
fails 1 "$TMP/max.json: explain: group 0: attribution is not finite" "$DRIPLE" explain \
    --grouped "$TMP/max.json" --inspector "$INSP"
echo '{"format": "driple-inspector/1", "outputs": [' >"$TMP/trunc.json"
fails 1 "$TMP/trunc.json" "$DRIPLE" explain "$BIG" --inspector "$TMP/trunc.json"

# --- the benchmark ---
ok "$DRIPLE" bench explain --groups 20 --repeat 1 --json
contains "$TMP/out" '"grad_ms": '
contains "$TMP/out" '"occlusion_ms": '
contains "$TMP/out" '"groups": 20'

finish
