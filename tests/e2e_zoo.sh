#!/bin/sh
# e2e_zoo.sh: `driple zoo list|build` end to end: every model builds and reads back through
# `driple graph info`, the options reach the graph, bad arguments fail with exit 2 and a message,
# a bad model name or output path with exit 1; the samples in samples/graphs load.
. tests/lib.sh

ok "$DRIPLE" zoo list
contains "$TMP/out" "resnet50"
contains "$TMP/out" "gpt2_small"
ok "$DRIPLE" zoo list --json
contains "$TMP/out" '"name": "bert_base", "family": "bert"'
contains "$TMP/out" '"params": 138357544'
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert len(a) >= 15 and all("name" in m for m in a)' "$TMP/out"; then pass; else fail "zoo list --json is not an array of objects with name"; fi
fi

# Every model of the list builds (the size variants included) and the list has them all.
models=$("$DRIPLE" zoo list | awk '$2 == "image" || $2 == "sequence" { print $1 }')
n=0
for m in $models; do
    ok "$DRIPLE" zoo build "$m" --batch 8 -o "$TMP/$m.json"
    contains "$TMP/$m.json" '"format":"driple-graph/1"'
    n=$((n + 1))
done
if [ "$n" -eq 43 ]; then pass; else fail "zoo list shows $n models, expected 43"; fi
for m in vgg11 wide_resnet50_2 mobilenet_v1_050 mobilenet_v2_140 densenet201 squeezenet1_1 \
         lstm_lm_large transformer_big bert_tiny distilgpt2 gpt2_large; do
    case " $(echo $models) " in *" $m "*) pass ;; *) fail "zoo list lacks $m" ;; esac
done
ok "$DRIPLE" graph info "$TMP/mobilenet_v2_140.json"
contains "$TMP/out" "6108776 parameters (trained), 47936 in buffers"
ok "$DRIPLE" graph info "$TMP/bert_tiny.json"
contains "$TMP/out" "4433468 parameters"
ok "$DRIPLE" graph info "$TMP/resnet50.json"
contains "$TMP/out" "25557032 parameters (trained), 53120 in buffers"
contains "$TMP/out" "exported batch   8"

# Options reach the graph.
ok "$DRIPLE" zoo build vgg16 --optimizer adam --precision mixed --batch 4 --input 64 -o "$TMP/v.json"
contains "$TMP/v.json" '"op":"ApplyAdam"'
contains "$TMP/v.json" '"dtype":"float16"'
contains "$TMP/v.json" '"shape":[-1,64,64,3]'
ok "$DRIPLE" zoo build lstm_lm --seq 10 --optimizer sgd -o "$TMP/l.json"
contains "$TMP/l.json" '"op":"ApplyGradientDescent"'
contains "$TMP/l.json" '"shape":[-1,10]'
ok "$DRIPLE" zoo build resnet50 --nchw -o "$TMP/n.json"
contains "$TMP/n.json" '"data_format":"NCHW"'
ok "$DRIPLE" zoo build squeezenet -o -
contains "$TMP/out" '"name":"squeezenet"'

# Bad input: usage errors exit 2, run errors exit 1, each naming what is wrong.
fails 1 "unknown model 'resnet5'" "$DRIPLE" zoo build resnet5 -o "$TMP/x.json"
fails 2 "--optimizer 'rmsprop'" "$DRIPLE" zoo build vgg16 --optimizer rmsprop -o "$TMP/x.json"
fails 2 "--precision 'fp8'" "$DRIPLE" zoo build vgg16 --precision fp8 -o "$TMP/x.json"
fails 2 "missing -o" "$DRIPLE" zoo build vgg16
fails 2 "which model" "$DRIPLE" zoo build -o "$TMP/x.json"
fails 2 "takes --seq" "$DRIPLE" zoo build bert_base --input 224 -o "$TMP/x.json"
fails 2 "--batch" "$DRIPLE" zoo build vgg16 --batch 0 -o "$TMP/x.json"
fails 1 "input size 8 out of range" "$DRIPLE" zoo build vgg16 --input 8 -o "$TMP/x.json"
fails 1 "sequence length 4096" "$DRIPLE" zoo build gpt2_small --seq 4096 -o "$TMP/x.json"
fails 1 "/nonexistent/dir/x.json" "$DRIPLE" zoo build vgg16 -o /nonexistent/dir/x.json
fails 2 "unknown subcommand 'frobnicate'" "$DRIPLE" zoo frobnicate
fails 2 "missing subcommand" "$DRIPLE" zoo

# ONNX import: the same training expansion (gradients, optimizer) on a model made by the tests.
ok "$DRIPLE" graph import tests/data/onnx/tiny_cnn.onnx -o "$TMP/cnn.json" --exported-batch 16
contains "$TMP/cnn.json" '"op":"Conv2DBackpropFilter"'
contains "$TMP/cnn.json" '"op":"ApplyMomentum"'
contains "$TMP/cnn.json" '"framework":"onnx"'
ok "$DRIPLE" graph info tests/data/onnx/tiny_res.onnx
head -c 300 tests/data/onnx/tiny_cnn.onnx > "$TMP/cut.onnx"
fails 1 "cut.onnx:byte" "$DRIPLE" graph info "$TMP/cut.onnx"

# Generated architectures: a listing with parameters and FLOPs, graphs written on request, the
# same seed giving the same graphs, `zoo build` of a generated name, bad arguments refused.
ok "$DRIPLE" zoo generate --seed 3 --count 4
contains "$TMP/out" "GFLOP/STEP"
contains "$TMP/out" "gen-"
ok "$DRIPLE" zoo generate --seed 3 --count 6 --json
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert len(a) == 6 and all(m["params"] == m["closed_form_params"] > 0 and m["flops"] > 0 and m["ops"] > 0 for m in a)' "$TMP/out"; then pass; else fail "zoo generate --json: 6 models with params = closed form, flops and ops"; fi
fi
mkdir -p "$TMP/gen1" "$TMP/gen2"
ok "$DRIPLE" zoo generate --seed 3 --count 3 --start 10 --kind transformer --out "$TMP/gen1"
ok "$DRIPLE" zoo generate --seed 3 --count 3 --start 10 --kind transformer --out "$TMP/gen2"
for i in 10 11 12; do
    f=gen-transformer-s3-$i.json
    if cmp -s "$TMP/gen1/$f" "$TMP/gen2/$f"; then pass; else fail "$f differs between two runs of one seed"; fi
done
ok "$DRIPLE" zoo build gen-transformer-s3-11 -o "$TMP/g11.json"
if cmp -s "$TMP/g11.json" "$TMP/gen1/gen-transformer-s3-11.json"; then pass; else fail "zoo build of a generated name differs from zoo generate's graph"; fi
ok "$DRIPLE" graph info "$TMP/g11.json"
ok "$DRIPLE" zoo build gen-mlp-s1-4 --batch 16 --precision mixed -o "$TMP/m.json"
contains "$TMP/m.json" '"dtype":"float16"'
fails 2 "missing --seed" "$DRIPLE" zoo generate --count 2
fails 2 "missing --count" "$DRIPLE" zoo generate --seed 2
fails 2 "--kind 'gnn'" "$DRIPLE" zoo generate --seed 2 --count 2 --kind gnn
fails 2 "input size is part of" "$DRIPLE" zoo build gen-cnn-s1-2 --input 64 -o "$TMP/x.json"
fails 1 "unknown model 'gen-cnn-s1-'" "$DRIPLE" zoo build gen-cnn-s1- -o "$TMP/x.json"
fails 1 "$TMP/nodir" "$DRIPLE" zoo generate --seed 1 --count 1 --out "$TMP/nodir"

# The shipped samples were made by `driple zoo build` (defaults) and load; they must match what
# the current builder writes (regenerate: driple zoo build MODEL -o samples/graphs/MODEL.json).
for f in samples/graphs/*.json; do
    [ -f "$f" ] || continue
    ok "$DRIPLE" graph info "$f"
    m=$(basename "$f" .json)
    "$DRIPLE" zoo build "$m" -o "$TMP/sample.json" >/dev/null 2>&1
    if cmp -s "$TMP/sample.json" "$f"; then pass; else fail "$f is stale: run '$DRIPLE zoo build $m -o $f'"; fi
done
finish
