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
finish
