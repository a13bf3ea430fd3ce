#!/bin/sh
# e2e_cli.sh: the command line's own contract: help, version, unknown commands.
. tests/lib.sh
ok "$DRIPLE" help
contains "$TMP/out" "predict"
ok "$DRIPLE" --version
fails 2 "unknown command 'frobnicate'" "$DRIPLE" frobnicate
# issue 16: a graph file that is not there is reported as such, as `driple explore` does, not as
# an unknown command
fails 1 "missing.json: cannot open: No such file or directory" "$DRIPLE" missing.json
if grep -q "unknown command" "$TMP/err"; then fail "driple missing.json: 'unknown command'"; else pass; fi
fails 1 "nowhere/model.onnx: cannot open" "$DRIPLE" nowhere/model.onnx
# one batch limit everywhere (DP_BATCH_MAX): the explorer, predict, compare and zoo build alike
fails 2 "--batch '1048577': expected an integer in [1, 1048576]" "$DRIPLE" explore samples/graphs/alexnet.json --batch 1048577
fails 2 "--batch '1048577': expected an integer in [1, 1048576]" "$DRIPLE" zoo build alexnet --batch 1048577 -o "$TMP/a.json"
fails 2 "--batch '1048577': expected an integer in [1, 1048576]" "$DRIPLE" predict samples/graphs/alexnet.json --setting V100-P1w2ho-PCIe --batch 1048577
ok "$DRIPLE" explore samples/graphs/alexnet.json --batch 1048576 --bench-keys 1
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
# A setting not in the list (issue: ad-hoc settings): predict and explain name it by the cluster
# options or by its id, and find the inspector the explorer saved for it (t then f) in the user
# inspector directory, named <full GPU name>-P<ps>w<workers><ho|he>-<network>[-mixed].json.
# (Where none is found, the shipped setting-aware inspector answers: --setting-aware none shows
# the per-setting messages.)
U="$TMP/user-insp"
mkdir -p "$U"
fails 1 "$U/RTX4090-P1w8ho-PCIe.json does not exist" env DRIPLE_INSPECTORS="$U" "$DRIPLE" predict $G --gpu RTX4090 --ps 1 --workers 8 --network PCIe --setting-aware none
contains "$TMP/err" "press t (transfer) then f (save)"
contains "$TMP/err" "driple transfer"
fails 1 "$U/RTX4090-P1w8ho-PCIe.json does not exist" env DRIPLE_INSPECTORS="$U" "$DRIPLE" predict $G --setting 4090-P1w8ho-PCIe --setting-aware none
cp assets/inspectors/V100-P1w2ho-PCIe.json "$U/RTX4090-P1w8ho-PCIe.json" # self-contained (no base)
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" predict $G --gpu RTX4090 --ps 1 --workers 8 --network PCIe --json
contains "$TMP/out" '"setting": "4090-P1w8ho-PCIe"'
contains "$TMP/out" "\"inspector\": \"$U/RTX4090-P1w8ho-PCIe.json\""
contains "$TMP/out" '"workers": 8'
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" predict $G --setting 4090-P1w8ho-PCIe --json
contains "$TMP/out" "\"inspector\": \"$U/RTX4090-P1w8ho-PCIe.json\""
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" predict $G --setting RTX4090-P1w8ho-PCIe --json
contains "$TMP/out" "\"inspector\": \"$U/RTX4090-P1w8ho-PCIe.json\""
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" explain $G --gpu RTX4090 --ps 1 --workers 8 --network pcie --json
contains "$TMP/out" "$U/RTX4090-P1w8ho-PCIe.json"
# compare adds the named setting as one more row; a listed one is not repeated.
rows() { grep -c "^$1 " "$TMP/out"; } # rows of the compare table for setting id $1
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" compare $G --setting 4090-P1w8ho-PCIe
contains "$TMP/out" "$U/RTX4090-P1w8ho-PCIe.json"
[ "$(rows 4090-P1w8ho-PCIe)" = 1 ] && pass || fail "compare --setting: no row for 4090-P1w8ho-PCIe"
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" compare $G --setting $S
[ "$(rows $S)" = 1 ] && pass || fail "compare --setting $S: $(rows $S) rows, expected 1"
# The options of a listed cluster take the list's own inspector (without the setting-aware one).
ok env DRIPLE_INSPECTORS="$U" "$DRIPLE" predict $G --gpu V100-PCIe-16GB --ps 1 --workers 2 --network PCIe --json --setting-aware none
contains "$TMP/out" '"inspector": "assets/inspectors/V100-P1w2ho-PCIe.json"'
# A paper-style short GPU id names one GPU (issue 16: "V100" once fit three and was refused).
fails 1 "V100-PCIe-16GB-P1w8ho-PCIe.json does not exist" "$DRIPLE" predict $G --setting V100-P1w8ho-PCIe --setting-aware none
fails 1 "no setting 'NOPE'" "$DRIPLE" predict $G --setting NOPE
# Bad option values exit 2 naming the option.
fails 2 "--workers '-2'" "$DRIPLE" predict $G --gpu RTX4090 --ps 1 --workers -2 --network PCIe
fails 2 "--gpu Voodoo: no such GPU" "$DRIPLE" predict $G --gpu Voodoo --ps 1 --workers 2 --network PCIe
fails 2 "--network 3GbE: unknown network" "$DRIPLE" predict $G --gpu RTX4090 --ps 1 --workers 2 --network 3GbE
fails 2 "--placement middle" "$DRIPLE" explain $G --gpu RTX4090 --ps 1 --workers 2 --network PCIe --placement middle
fails 2 "needs --gpu, --workers, --network and" "$DRIPLE" predict $G --gpu RTX4090 --ps 1
fails 2 "give one of --inspector M, --setting ID" "$DRIPLE" predict $G --setting $S --workers 2
finish
