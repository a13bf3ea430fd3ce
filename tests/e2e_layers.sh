#!/bin/sh
# e2e_layers.sh: the layers point one way (tools/check_layers.sh: engine subsystems by rank, on
# the sources and the built objects; the front ends through dp/ only; scratch files under
# $BUILD; files over 800 lines say why at their top), and the check itself catches a reference
# that goes up and a long file without its reason.
. tests/lib.sh
B=${BUILD:-build}
case $B in /*) ABS=$B ;; *) ABS=$PWD/$B ;; esac
if sh tools/check_layers.sh "$B" >"$TMP/out" 2>"$TMP/err"; then pass; else fail "$(cat "$TMP/err")"; fi
# a copy of the sources with one include that goes up: refused, naming it
mkdir -p "$TMP/src/engine/src/core" "$TMP/src/tools"
cp tools/check_layers.sh "$TMP/src/tools/"
cp -r engine "$TMP/src/" && cp -r cli tui tests "$TMP/src/"
echo '#include "session/session_impl.h"' >>"$TMP/src/engine/src/core/metrics.c"
if (cd "$TMP/src" && sh tools/check_layers.sh "$ABS") >"$TMP/out" 2>"$TMP/err"; then
    fail "an include from core to session passed the check"
else
    contains "$TMP/err" "core -> session goes up or sideways (engine/src/core/metrics.c includes session/)"
fi
# a file over 800 lines without its reason at its top: refused, naming it; with the reason: passes
sed -i '$d' "$TMP/src/engine/src/core/metrics.c"
awk 'BEGIN { for (i = 0; i < 801; i++) print "/* line */" }' >"$TMP/src/cli/cmd_long.c"
if (cd "$TMP/src" && sh tools/check_layers.sh "$ABS") >"$TMP/out" 2>"$TMP/err"; then
    fail "a file of 801 lines without a reason passed the check"
else
    contains "$TMP/err" "cli/cmd_long.c: 801 lines and no reason at its top"
fi
sed -i '1s|.*|/* Over 800 lines on purpose: a test. */|' "$TMP/src/cli/cmd_long.c"
if (cd "$TMP/src" && sh tools/check_layers.sh "$ABS") >"$TMP/out" 2>"$TMP/err"; then pass
else fail "a long file with its reason failed the check: $(cat "$TMP/err")"; fi
finish
