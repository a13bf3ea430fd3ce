#!/bin/sh
# e2e_layers.sh: the layers point one way (tools/check_layers.sh: engine subsystems by rank, on
# the sources and the built objects; the front ends through dp/ only; scratch files under
# $BUILD), and the check itself catches a reference that goes up.
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
finish
