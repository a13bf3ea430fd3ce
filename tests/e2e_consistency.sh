#!/bin/sh
# e2e_consistency.sh: one number, one meaning (issue 30). predict, explain, compare and the
# explorer (its Predict tab and its Importance tab, through tmux) print the same gpu_util.active
# for 5 settings of the default list (parameter servers and all-reduce, several GPUs and
# networks), through the same inspector named in full; predict's JSON says when bursts span
# iterations and its relation holds; net/iter follows the sync (the simulator's under
# all-reduce); an unknown price is "-" in compare's table and null in its JSON, never nan; BERT's
# epoch is its corpus in sequences, not ImageNet's images.
. tests/lib.sh
. tests/tui_lib.sh
# no user inspector directory's files: every front end resolves the same way
export DRIPLE_INSPECTORS="$TMP/user-inspectors"
G=samples/graphs/resnet50.json
# wide enough for the Predict tab to show 4 significant digits
TUI_COLS=120; TUI_ROWS=35
SETTINGS="V100-P1w2ho-PCIe A100-P2w8ho-100GbE H100-P1w4he-100GbE-mixed A100-AR8-NVLink H100-AR16-IB-HDR-pytorch-mixed"

# first_active FILE: the first gpu_util.active in a JSON document (the prediction's own)
first_active() { grep -o '"gpu_util": {"idle": [^,]*, "active": [^,]*' "$1" | head -1 | sed 's/.*"active": //'; }
# same4 A B: A and B agree to the 4 significant digits the explorer shows
same4() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; e = 0.5001 * 10 ^ (int(log(b) / log(10)) - 3); exit !(a > 0 && d <= e) }'; }

ok "$DRIPLE" compare "$G" --json
cp "$TMP/out" "$TMP/compare.json"
ok "$DRIPLE" compare "$G"
cp "$TMP/out" "$TMP/compare.txt"
for s in $SETTINGS; do
    ok "$DRIPLE" predict "$G" --setting "$s" --json
    p=$(first_active "$TMP/out")
    insp=$(sed -n 's/.*"setting": "[^"]*", "source": "[^"]*", "inspector": "\([^"]*\)".*/\1/p' "$TMP/out")
    [ -n "$p" ] && [ -n "$insp" ] && pass || fail "$s: predict --json gives no gpu_util.active or inspector"
    ok "$DRIPLE" explain "$G" --setting "$s" --json
    e=$(sed -n 's/.*"value": \([^,]*\),.*/\1/p' "$TMP/out")
    [ "$e" = "$p" ] && pass || fail "$s: explain's value $e, predict's gpu_util.active $p"
    contains "$TMP/out" "\"inspector\": \"$insp\""
    ok "$DRIPLE" explain "$G" --setting "$s"
    contains "$TMP/out" "inspector $insp ("
    contains "$TMP/out" "gpu_util.active = $(printf '%.4g' "$p") ms (the value predict prints)"
    # compare's row for the setting
    sed 's/{"id": /\n{"id": /g' "$TMP/compare.json" | grep "^{\"id\": \"$s\"" >"$TMP/row"
    c=$(first_active "$TMP/row")
    [ "$c" = "$p" ] && pass || fail "$s: compare's gpu_util.active $c, predict's $p"
    row=$(awk -v s="$s" '$1 == s { print $4 }' "$TMP/compare.txt")
    [ "$row" = "$(printf '%.4g' "$p")" ] && pass || fail "$s: compare's table GPU act '$row', predict's $p"
    # the explorer at the same setting: the Predict tab, then the Importance tab's value
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_INSPECTORS='$DRIPLE_INSPECTORS'" "'$BIN' explore '$G' --setting '$s'"
    expect "Prediction: 12 metrics" 30
    t=$(grep 'GPU util % pred' "$TMP/screen" | awk '{ print $6 }' | sed 's/±.*//; s/\^//')
    same4 "$t" "$p" && pass || fail "$s: the Predict tab's GPU util act. ms '$t', predict's $p"
    tm send-keys -t e2e i
    expect_re "importance: gpu_util.active = [0-9.e+]+ ms" 60
    v=$(grep -o 'importance: gpu_util.active = [0-9.e+]* ms' "$TMP/screen" | awk '{print $4}')
    [ "$v" = "$(printf '%.4g' "$p")" ] && pass || fail "$s: the Importance tab's value '$v', predict's $p"
    tm send-keys -t e2e q
    ended 0 "q at $s"
done

# bursts that span iterations say so, and the relation holds (ResNet-50 at batch 128 under
# all-reduce: the GPU's bursts of consecutive iterations merge)
ok "$DRIPLE" predict "$G" --setting V100-SXM2-16GB-AR3-NVLink --batch 128 --json
contains "$TMP/out" '"bursts": {"iterations_per_burst_cycle": '
contains "$TMP/out" '"bursts_span_iterations": true'
contains "$TMP/out" '"iteration_ms": "(gpu_util.idle + gpu_util.active) / bursts.iterations_per_burst_cycle"'
idle=$(grep -o '"gpu_util": {"idle": [^,]*' "$TMP/out" | head -1 | sed 's/.*"idle": //')
act=$(first_active "$TMP/out")
it=$(grep -o '"derived": {"iteration_ms": [^,]*' "$TMP/out" | head -1 | sed 's/.*: //')
k=$(grep -o '"bursts": {"iterations_per_burst_cycle": [^,]*' "$TMP/out" | head -1 | sed 's/.*: //')
awk -v i="$idle" -v a="$act" -v t="$it" -v k="$k" 'BEGIN { d = (i + a) / k - t; if (d < 0) d = -d; exit !(k > 1 && d < 1e-6 * t) }' &&
    pass || fail "iteration $it != (idle $idle + active $act) / $k"
ok "$DRIPLE" predict "$G" --setting V100-SXM2-16GB-AR3-NVLink --batch 128
contains "$TMP/out" "bursts span iterations: one GPU burst and its idle period cover"
# net/iter by the sync: all-reduce on 3 NVLink GPUs moves 2 x 2/3 x 4 B a parameter, the
# simulator's figure too; the parameter-server formula would say 204.9 MB
contains "$TMP/out" "network per iteration 136.6 MB per worker (all-reduce"
ok "$DRIPLE" predict "$G" --setting V100-SXM2-16GB-AR3-NVLink --json
n=$(grep -o '"net_mb_per_iter": [0-9][^,]*' "$TMP/out" | sort -u | wc -l)
[ "$n" = 1 ] && pass || fail "predicted and simulated net_mb_per_iter differ under all-reduce"
contains "$TMP/out" '"net_mb_per_iter": 136.58747733'

# a GPU without a price: "-" in the table, null in the JSON, never nan
awk '$1 == "2080Ti-P1w2ho-PCIe" { exit !($9 == "-") }' "$TMP/compare.txt" && pass || fail "compare: no '-' for the 2080 Ti's epoch \$"
if grep -q nan "$TMP/compare.txt"; then fail "compare prints nan"; else pass; fi
tr '{' '\n' <"$TMP/compare.json" | grep -A40 '"id": "2080Ti-P1w2ho-PCIe"' | grep -m1 -o '"epoch_cost": [^,]*' >"$TMP/cost"
contains "$TMP/cost" '"epoch_cost": null'

# BERT's epoch: its pre-training corpus in sequences of 128 tokens, said where it comes from
ok "$DRIPLE" predict samples/graphs/bert_base.json --setting A100-P2w8ho-100GbE
contains "$TMP/out" "epoch (25781250 samples: sequences of BERT's pre-training corpus"
ok "$DRIPLE" predict samples/graphs/bert_base.json --setting A100-P2w8ho-100GbE --epoch-samples 1000 --json
contains "$TMP/out" '"epoch_samples": 1000,'
# explain names the layers, not the constants that feed them
ok "$DRIPLE" explain samples/graphs/bert_base.json --setting A100-P2w8ho-100GbE --top 40
for op in Const VariableV2 Identity NoOp; do
    if grep -Eq "^ $op +[0-9]+ +[0-9.]+%" "$TMP/out"; then fail "explain ranks $op"; else pass; fi
done
finish
