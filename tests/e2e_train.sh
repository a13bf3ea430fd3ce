#!/bin/sh
# e2e_train.sh: `driple train --restarts K` end to end on a small simulated dataset: K
# initialisations on one split, each listed with its validation and test MAPE, the one with the
# lowest validation MAPE kept (the same figures on a second run), and bad counts refused with a
# clear message (transfer has no initialisation to restart).
. tests/lib.sh

ok "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/ds" \
    --models squeezenet,alexnet,resnet18 --graphs 12 --jobs 1
D="$TMP/ds/V100-P1w2he-40GbE.json"
ok "$DRIPLE" train --dataset "$D" -o "$TMP/r.json" --hidden 8 --epochs 3 --restarts 3 --json
contains "$TMP/out" '"restarts": [{"init": 1, '
contains "$TMP/out" '{"init": 3, '
# The one kept has the lowest validation MAPE of the three, and its figures are the inspector's.
tr ',' '\n' <"$TMP/out" >"$TMP/fields"
kept=$(sed -n 's/.*"kept_restart": \([0-9]*\).*/\1/p' "$TMP/out")
best=$(grep '"val_mape_mean"' "$TMP/fields" |
       awk -F': ' '{ v = $2 + 0; if (NR == 1 || v < m) { m = v; k = NR } } END { print k }')
if [ -n "$kept" ] && [ "$kept" = "$best" ]; then pass
else fail "kept_restart '$kept' is not the lowest validation MAPE (init $best)"; fi
sed 's/"seconds": [0-9.]*//g; s/"embed_seconds": [0-9.e-]*//g' "$TMP/out" >"$TMP/a.txt"
ok "$DRIPLE" train --dataset "$D" -o "$TMP/r2.json" --hidden 8 --epochs 3 --restarts 3 --json
sed 's/"seconds": [0-9.]*//g; s/"embed_seconds": [0-9.e-]*//g; s/r2\.json/r.json/' \
    "$TMP/out" >"$TMP/b.txt"
if cmp -s "$TMP/a.txt" "$TMP/b.txt"; then pass; else fail "two runs of --restarts 3 differ"; fi
ok "$DRIPLE" train --dataset "$D" -o "$TMP/r.json" --hidden 8 --epochs 3 --restarts 2
contains "$TMP/out" 'init 2: 3 epochs'
contains "$TMP/out" '(kept: lowest val)'
fails 2 "--restarts '0': expected an integer in [1, 16]" \
    "$DRIPLE" train --dataset "$D" -o "$TMP/x.json" --restarts 0
fails 2 "--restarts '17': expected an integer in [1, 16]" \
    "$DRIPLE" train --dataset "$D" -o "$TMP/x.json" --restarts 17
fails 2 "unknown option '--restarts'" \
    "$DRIPLE" transfer --from "$TMP/r.json" --dataset "$D" -o "$TMP/x.json" --restarts 2
finish
