#!/bin/sh
# e2e_cli.sh: the command line's own contract: help, version, unknown commands.
. tests/lib.sh
ok "$DRIPLE" help
contains "$TMP/out" "predict"
ok "$DRIPLE" --version
fails 2 "unknown command 'frobnicate'" "$DRIPLE" frobnicate
finish
