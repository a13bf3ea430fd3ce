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
finish
