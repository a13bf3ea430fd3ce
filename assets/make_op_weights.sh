#!/bin/sh
# make_op_weights.sh: rebuilds assets/op_weights.json (driple-op-weights/1), the op-type weight
# table (group feature 3: each op type's share of the GPU ops of a corpus of training graphs).
# Corpus: every model of `driple zoo list`, each with --optimizer sgd, momentum and adam and
# with --precision mixed (60 graphs), so that every op type the zoo emits has a weight. The
# shipped inspectors were trained with this table: rebuild it only together with them.
# Usage: sh assets/make_op_weights.sh [BIN] [OUT]   (defaults: build/driple assets/op_weights.json)
set -eu
BIN=${1:-build/driple}
OUT=${2:-assets/op_weights.json}
[ -x "$BIN" ] || { echo "make_op_weights: $BIN not built (run make)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
models=$("$BIN" zoo list | awk 'NR > 1 && ($2 == "image" || $2 == "sequence") { print $1 }')
n=0
for m in $models; do
    for o in sgd momentum adam; do
        "$BIN" zoo build "$m" --optimizer "$o" -o "$TMP/$m-$o.json" >/dev/null
        n=$((n + 1))
    done
    "$BIN" zoo build "$m" --precision mixed -o "$TMP/$m-mixed.json" >/dev/null
    n=$((n + 1))
done
list=$(echo $models)
"$BIN" graph weights "$TMP"/*.json -o "$OUT" --source "relative frequency of GPU op types over $n training graphs made by 'driple zoo build' (models: $list; each with --optimizer sgd, momentum and adam, and with --precision mixed; default batch and input). Synthetic TensorFlow-1-style graphs made by this project, not TensorFlow exports. Rebuild: sh assets/make_op_weights.sh"
