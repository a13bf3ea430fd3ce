#!/bin/sh
# e2e_graph.sh: `driple graph info|import|coarsen|weights` through the binary: outputs, exit
# codes (0 ok, 1 bad input, 2 usage) and error messages naming the file and the place.
. tests/lib.sh
D=tests/data/graph

# info: text and JSON, every format by content.
ok "$DRIPLE" graph info $D/small.pbtxt
contains "$TMP/out" "IteratorGetNext 'IteratorGetNext' dim 0"
ok "$DRIPLE" graph info $D/small.pbtxt --json
for k in '"ops": 12' '"gpu_ops": 9' '"gpu_edges": 10' '"isolated_gpu_ops": 1' '"components": 1' \
         '"largest_component_ops": 8' '"dropped_inputs": 1' '"op_types": {' '"MatMul": 2' '"variables": 1' '"parameter_bytes": 128'; do
    contains "$TMP/out" "$k"
done
ok "$DRIPLE" graph info $D/small.pbtxt --json --batch 32
contains "$TMP/out" '"batch": 32'
contains "$TMP/out" '"gpu_tensor_elements": 416'
cp $D/small.pbtxt "$TMP/renamed.json"
ok "$DRIPLE" graph info "$TMP/renamed.json" --json
contains "$TMP/out" '"framework": "tensorflow"'
if [ -f tests/data/onnx/tiny_mlp.onnx ]; then   # ONNX too, by content (helper D's importer)
    cp tests/data/onnx/tiny_mlp.onnx "$TMP/model.dat"
    ok "$DRIPLE" graph info "$TMP/model.dat" --json
    contains "$TMP/out" '"framework": "onnx"'
fi

# import: pbtxt -> driple-graph/1, which reads back the same.
ok "$DRIPLE" graph import $D/small.pbtxt -o "$TMP/small.json"
contains "$TMP/small.json" '"format":"driple-graph/1"'
contains "$TMP/small.json" '"batch_source":"IteratorGetNext'
ok "$DRIPLE" graph info "$TMP/small.json" --json
contains "$TMP/out" '"largest_component_ops": 8'
ok "$DRIPLE" graph import $D/small.pbtxt -o -
contains "$TMP/out" '"name":"IteratorGetNext"'
ok "$DRIPLE" graph import $D/small.pbtxt --exported-batch 8 -o "$TMP/small8.json"
contains "$TMP/small8.json" '"batch":8,"batch_source":"--exported-batch"'

# coarsen: grouped graph with members; deterministic for a seed; k > ops clamps with a note.
ok "$DRIPLE" graph coarsen $D/small.json --groups 3 --seed 7 -o "$TMP/g1.json"
contains "$TMP/g1.json" '"format":"driple-grouped/1"'
contains "$TMP/g1.json" '"members":['
contains "$TMP/g1.json" '"seed":7'
contains "$TMP/err" "3 groups"
ok "$DRIPLE" graph coarsen $D/small.json --groups 3 --seed 7 -o "$TMP/g2.json"
if cmp -s "$TMP/g1.json" "$TMP/g2.json"; then pass; else fail "coarsen is not deterministic"; fi
ok "$DRIPLE" graph coarsen $D/small.pbtxt --groups 500 --batch 64 -o "$TMP/g3.json"
contains "$TMP/err" "500 groups asked, the graph keeps 8 ops: 8 groups"
contains "$TMP/g3.json" '"batch":64'

# The shipped weight table covers every op type of the sample graphs.
for f in samples/graphs/*.json; do
    [ -f "$f" ] || continue
    ok "$DRIPLE" graph coarsen "$f" -o "$TMP/sample.json"
    if grep -q "missing from the weight table" "$TMP/err"; then fail "$f: $(cat "$TMP/err")"; else pass; fi
done

# weights: rebuild a table from graphs, use it; unknown types are reported once each.
ok "$DRIPLE" graph weights $D/small.json $D/small.pbtxt -o "$TMP/w.json"
contains "$TMP/w.json" '"format":'
contains "$TMP/w.json" 'small.json, small.pbtxt'
printf 'node { name: "a" op: "FooOp" device: "/gpu:0" }\nnode { name: "b" op: "FooOp" input: "a" device: "/gpu:0" }\n' > "$TMP/foo.pbtxt"
ok "$DRIPLE" graph coarsen "$TMP/foo.pbtxt" --weights "$TMP/w.json" -o "$TMP/g4.json"
contains "$TMP/err" "op types missing from the weight table (weight 0): FooOp"
if [ "$(grep -o FooOp "$TMP/err" | wc -l)" -eq 1 ]; then pass; else fail "FooOp reported more than once"; fi

# A graph that names no device: every op taken as a GPU op, with a note.
printf 'node { name: "a" op: "X" }\nnode { name: "b" op: "Y" input: "a" }\n' > "$TMP/unplaced.pbtxt"
ok "$DRIPLE" graph coarsen "$TMP/unplaced.pbtxt" -o "$TMP/g5.json"
contains "$TMP/err" "names no device: every op taken as a GPU op"
ok "$DRIPLE" graph info "$TMP/unplaced.pbtxt" --json
contains "$TMP/out" '"gpu_ops": 2'
contains "$TMP/out" '"unplaced": true'

# Bad input: exit 1 with file and place.
fails 1 "no/such.json: cannot open" "$DRIPLE" graph info no/such.json
fails 1 "bad_dtype.json:\$.nodes[1].dtype: unknown dtype 'float33'" "$DRIPLE" graph info $D/bad_dtype.json
fails 1 "truncated.json:2:" "$DRIPLE" graph info $D/truncated.json
fails 1 "truncated.pbtxt:" "$DRIPLE" graph import $D/truncated.pbtxt -o "$TMP/x.json"
fails 1 "bad_syntax.pbtxt:6:1: expected ':' or '{' after 'bogus'" "$DRIPLE" graph info $D/bad_syntax.pbtxt
fails 1 "empty.json:\$.nodes: empty graph" "$DRIPLE" graph info $D/empty.json
fails 1 "overflow.json:\$.nodes[0].shape: the dimensions' product overflows" "$DRIPLE" graph info $D/overflow.json
fails 1 "nogpu.json: nogpu: no op is placed on a GPU" "$DRIPLE" graph coarsen $D/nogpu.json -o "$TMP/x.json"
fails 1 "x.json: cannot open" "$DRIPLE" graph coarsen $D/small.json --weights "$TMP/nope/x.json" -o "$TMP/x.json"
printf '\377\000\023' > "$TMP/junk.bin"
fails 1 "junk.bin: not a graph" "$DRIPLE" graph info "$TMP/junk.bin"
mkfifo "$TMP/fifo"   # a non-regular output (like /dev/null) is written in place, not replaced
cat "$TMP/fifo" >"$TMP/fifo.out" &
cat_pid=$!
ok "$DRIPLE" graph coarsen $D/small.json -o "$TMP/fifo"
sleep 0.2; kill $cat_pid 2>/dev/null; wait $cat_pid 2>/dev/null # (a refused write: no writer ever)
if [ -p "$TMP/fifo" ]; then pass; else fail "the fifo was replaced"; fi
contains "$TMP/fifo.out" "driple-grouped/1"
fails 1 "cannot write" "$DRIPLE" graph import $D/small.json -o "$TMP/no/dir/x.json"

# Usage errors: exit 2.
fails 2 "missing -o" "$DRIPLE" graph coarsen $D/small.json
fails 2 "--groups '0'" "$DRIPLE" graph coarsen $D/small.json --groups 0 -o "$TMP/x.json"
fails 2 "--batch 'abc'" "$DRIPLE" graph info $D/small.json --batch abc
fails 2 "unknown subcommand 'frob'" "$DRIPLE" graph frob
fails 2 "unknown option '--frob'" "$DRIPLE" graph info $D/small.json --frob
fails 2 "missing GRAPH" "$DRIPLE" graph info
fails 2 "missing GRAPH" "$DRIPLE" graph weights -o "$TMP/w.json"
# A directory, a repeated NodeDef name, a graph without GPU ops: named, not crashed on.
fails 1 "tests/data: is a directory" "$DRIPLE" graph info tests/data
printf 'node { name: "a" name: "b" op: "MatMul" }\n' >"$TMP/twice.pbtxt"
fails 1 "twice.pbtxt:1:18: name: given twice in one node" "$DRIPLE" graph info "$TMP/twice.pbtxt"
fails 1 "$D/nogpu.json: nogpu: no op is placed on a GPU" "$DRIPLE" bench coarsen $D/nogpu.json

# The coarsening benchmark, once `driple bench` dispatches to it.
"$DRIPLE" bench coarsen --ops 3000 --repeat 1 --json >"$TMP/out" 2>"$TMP/err"
if grep -q "not implemented" "$TMP/err"; then
    echo "e2e_graph.sh: note: 'driple bench coarsen' is not wired yet; skipped"
else
    contains "$TMP/out" '"median_ms": '
fi
finish
