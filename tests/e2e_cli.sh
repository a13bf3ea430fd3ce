#!/bin/sh
# e2e_cli.sh: the command line's own contract: help, version, unknown commands.
. tests/lib.sh
ok "$DRIPLE" help
contains "$TMP/out" "predict"
ok "$DRIPLE" --version
fails 2 "unknown command 'frobnicate'" "$DRIPLE" frobnicate
# A directory where a file is expected names it, whichever loader reads it.
fails 1 "assets: " "$DRIPLE" graph info assets
fails 1 "assets: is a directory" "$DRIPLE" inspector info assets
fails 1 "samples: is a directory" "$DRIPLE" predict --grouped samples --inspector assets/inspectors/V100-P1w2ho-PCIe.json
# Text after the JSON value is refused, with its line and column.
printf '{"format": "driple-grouped/1", "groups": [{"tensor_size": 1, "ops": 1, "type_weight": 0}], "edges": []}\n} garbage\n' >"$TMP/g.json"
fails 1 "g.json:2:1: text after the end of the JSON value" "$DRIPLE" predict --grouped "$TMP/g.json" --inspector assets/inspectors/V100-P1w2ho-PCIe.json
# --exported-batch (issue 2): every command that reads a graph takes it; a bad value exits 2
# naming the option.
G=samples/graphs/alexnet.json
S=V100-P1w2ho-PCIe
TR=samples/traces/simulated_resnet50_V100-P1w2he-40GbE.csv
eb_check() { # eb_check CMD...: CMD --exported-batch 128 succeeds; 0 and x are refused
    ok "$@" --exported-batch 128
    fails 2 "--exported-batch '0'" "$@" --exported-batch 0
    fails 2 "--exported-batch 'x'" "$@" --exported-batch x
}
eb_check "$DRIPLE" predict $G --setting $S
eb_check "$DRIPLE" compare $G
eb_check "$DRIPLE" explain $G --setting $S
eb_check "$DRIPLE" simulate $G --setting $S --iterations 5
eb_check "$DRIPLE" explore $G --bench-keys 3
eb_check "$DRIPLE" $G --bench-keys 3
eb_check "$DRIPLE" dataset add --dataset "$TMP/eb.json" --graph $G --setting $S "$TR"
eb_check "$DRIPLE" bench coarsen $G --repeat 1
eb_check "$DRIPLE" bench explain $G --repeat 1
# The value is used: the graph's batch becomes it.
ok "$DRIPLE" predict $G --setting $S --exported-batch 64 --json
contains "$TMP/out" '"batch": 64'
fails 2 "--exported-batch needs a GRAPH" "$DRIPLE" predict --grouped "$TMP/g.json" --setting $S \
    --exported-batch 64
ok "$DRIPLE" help
contains "$TMP/out" "explore    [GRAPH] [--settings FILE] [--batch N] [--exported-batch N]"
# A simulator trace added to a dataset stays labelled simulated, never measured.
ok "$DRIPLE" dataset add --dataset "$TMP/simds.json" --graph samples/graphs/alexnet.json --setting V100-P1w2ho-PCIe "$TR"
contains "$TMP/out" "simulated"
contains "$TMP/simds.json" '"kind":"simulated"'
fails 2 "need a GRAPH" "$DRIPLE" explain --grouped ../shared/reference/cases/gcn/tiny3.grouped.json --setting V100-P1w2ho-PCIe --batch 32
# dataset eval: the error of an inspector on a dataset (the same code as inspector eval)
ok "$DRIPLE" dataset eval assets/inspectors/V100-P1w2ho-PCIe.json --dataset "$TMP/simds.json" --json
contains "$TMP/out" '"mape_mean"'
fails 1 "missing.json" "$DRIPLE" dataset eval assets/inspectors/V100-P1w2ho-PCIe.json --dataset "$TMP/missing.json"
fails 2 "needs a graph file" "$DRIPLE" simulate zoo:alexnet --setting V100-P1w2ho-PCIe --exported-batch 64
# A key given twice is refused (every lookup would see only the first), naming where.
printf '{"format": "driple-grouped/1", "groups": [{"tensor_size": 1, "ops": 1, "ops": 2, "type_weight": 0}], "edges": []}\n' >"$TMP/dup.json"
fails 1 'dup.json:$.groups[0].ops: listed twice' "$DRIPLE" predict --grouped "$TMP/dup.json" --inspector assets/inspectors/V100-P1w2ho-PCIe.json
finish
