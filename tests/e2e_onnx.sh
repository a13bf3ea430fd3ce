#!/bin/sh
# e2e_onnx.sh: every model of the ONNX corpus (tests/data/onnx/corpus: real PyTorch exports,
# weights stripped) opens in `graph info`, `predict`, `simulate` and the explorer (driven through
# tmux as e2e_tui.sh does); an op type driple does not know is warned about once, with its count;
# a dynamic batch asks for --batch; binary GraphDef and SavedModel open like their text form; a
# hostile ONNX file fails naming the file and the node.
. tests/lib.sh
S=V100-P1w2ho-PCIe
CORPUS=tests/data/onnx/corpus
n=0
for f in "$CORPUS"/*.onnx; do
    n=$((n + 1))
    ok "$DRIPLE" graph info "$f"
    contains "$TMP/out" "(onnx)"
    ok "$DRIPLE" predict "$f" --setting $S --batch 8
    contains "$TMP/out" "gpu_util"
    ok "$DRIPLE" simulate "$f" --setting $S --batch 8 --iterations 2
done
if [ $n -ge 25 ]; then pass; else fail "only $n corpus models"; fi

# Swin-T's shifted-window mask is built with ScatterND, an op driple keeps with a generic cost.
ok "$DRIPLE" graph info "$CORPUS/swin_t.onnx"
contains "$TMP/err" "warning: $CORPUS/swin_t.onnx: 45 ops of types driple does not know, kept with a generic cost (1 FLOP per output element): ScatterND (45)"
# exported with a dynamic batch: 32 assumed, said once on stderr (not when --batch is given)
ok "$DRIPLE" predict "$CORPUS/resnet18.onnx" --setting $S
contains "$TMP/err" "exported with a dynamic batch: 32 assumed"
contains "$TMP/out" "batch 32"
ok "$DRIPLE" graph info "$CORPUS/resnet18.onnx" --batch 8
if grep -q "dynamic batch" "$TMP/err"; then fail "note printed despite --batch"; else pass; fi
contains "$TMP/out" "graph            resnet18 (onnx)"
# parameters and buffers apart, each stored tensor with its rule
ok "$DRIPLE" graph info "$CORPUS/transformer.onnx" --json --tensors
contains "$TMP/out" '"parameters": 93324544, "buffers": 4096'
contains "$TMP/out" "buffer: an attention mask"
ok "$DRIPLE" predict "$CORPUS/resnet18.onnx" --setting $S --exported-batch 16
# a data cycle no loop closes is refused in every format, nothing written
fails 1 "cycle_no_loop.json: op 'b' is on a data cycle that no loop closes" \
    "$DRIPLE" graph coarsen tests/data/graph/cycle_no_loop.json -o "$TMP/cyc.json"
if [ -e "$TMP/cyc.json" ]; then fail "coarsen wrote a cyclic graph's groups"; else pass; fi
# the content decides: a garbage .onnx is no graph (not TensorFlow text)
printf 'garbage\n' >"$TMP/garbage.onnx"
fails 1 "garbage.onnx: not a graph this build reads" "$DRIPLE" graph info "$TMP/garbage.onnx"
fails 1 "negative_dim.onnx:byte" "$DRIPLE" graph info tests/data/fuzz/onnx/negative_dim.onnx
fails 1 "node 'a' (Add): the graph has a cycle through this node" \
    "$DRIPLE" graph info tests/data/fuzz/onnx/cycle.onnx

# binary GraphDef and SavedModel: the same graph as the text
ok "$DRIPLE" graph import tests/data/graph/attrs.pbtxt -o "$TMP/text.json"
ok "$DRIPLE" graph import tests/data/graph/attrs.pb -o "$TMP/binary.json"
if cmp -s "$TMP/text.json" "$TMP/binary.json"; then pass; else fail "attrs.pb differs from attrs.pbtxt"; fi
ok "$DRIPLE" graph info tests/data/graph/attrs_saved_model/saved_model.pb
contains "$TMP/out" "attrs_saved_model (tensorflow)"

# The explorer opens every corpus model (one tmux server per run, as e2e_tui.sh).
if ! command -v tmux >/dev/null 2>&1; then
    echo "e2e_onnx.sh: tmux is not installed: the explorer is NOT tested on the corpus" >&2
    fail "tmux missing"
    finish
    exit 1
fi
BIN=$(cd "$(dirname "$DRIPLE")" && pwd)/$(basename "$DRIPLE")
SETTINGS=assets/settings/default.json
if [ ! -f assets/inspectors/V100-P1w2ho-PCIe.json ]; then # no shipped inspectors: the published GCN
    mkdir -p "$TMP/fix/settings" "$TMP/fix/inspectors"
    cp "$SETTINGS" "$TMP/fix/settings/default.json"
    ok "$DRIPLE" inspector import-json ../shared/reference/gcn_pretrained_weights.json \
        --setting $S -o "$TMP/fix/inspectors/V100-P1w2ho-PCIe.json"
    SETTINGS="$TMP/fix/settings/default.json"
fi
k=0
trap 'i=0; while [ $i -le $k ]; do tmux -L "driple_onnx_$$_$i" kill-server >/dev/null 2>&1; i=$((i + 1)); done; rm -rf "$TMP"' EXIT
for f in "$CORPUS"/*.onnx; do
    k=$((k + 1)); sock="driple_onnx_$$_$k"
    rm -f "$TMP/rc"
    tmux -L "$sock" -f /dev/null new-session -d -s e2e -x 100 -y 30 \
        "cd '$PWD' && LANG=C.UTF-8 LC_ALL=C.UTF-8 '$BIN' explore '$f' --settings '$SETTINGS' --batch 8; echo \$? >'$TMP/rc'; sleep 2"
    i=0; seen=0
    while [ $i -lt 300 ]; do
        tmux -L "$sock" capture-pane -p -t e2e >"$TMP/screen" 2>/dev/null
        if grep -qF "Prediction: 12 metrics" "$TMP/screen"; then seen=1; break; fi
        sleep 0.1; i=$((i + 1))
    done
    if [ $seen = 1 ]; then pass; else fail "explore $f: no prediction on screen"; cat "$TMP/screen" >&2; fi
    tmux -L "$sock" send-keys -t e2e q
    i=0; while [ ! -f "$TMP/rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    if [ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ]; then pass; else fail "explore $f: exit status '$(cat "$TMP/rc" 2>/dev/null)'"; fi
    tmux -L "$sock" kill-server >/dev/null 2>&1
done
finish
