#!/bin/sh
# e2e_kernels.sh: the dense products' backends from the command line (issue 33): --version names
# the level, the backend and OpenBLAS (or its absence); DRIPLE_KERNELS and --kernels refuse an
# unknown value naming the allowed ones; `bench kernels` writes auto's table, which the next run
# reads; a malformed table is refused naming the file; bench output names the backend.
. tests/lib.sh
ok "$DRIPLE" --version
contains "$TMP/out" "kernels: "
contains "$TMP/out" "products: "
contains "$TMP/out" "auto's table: "
if grep -q "^openblas: none" "$TMP/out"; then
    blas=0
    contains "$TMP/out" "note: OpenBLAS: not in this build (made with OPENBLAS=0)"
    DRIPLE_KERNELS=openblas "$DRIPLE" --version >"$TMP/v2" 2>&1
    contains "$TMP/v2" "products: own"
    contains "$TMP/v2" "OpenBLAS asked for, but this build has none"
else
    blas=1
    contains "$TMP/out" "openblas: OpenBLAS"
    contains "$TMP/out" "products: own"
    DRIPLE_KERNELS=auto "$DRIPLE" --version >"$TMP/v1" 2>&1
    contains "$TMP/v1" "products: auto"
    DRIPLE_KERNELS=openblas "$DRIPLE" --version >"$TMP/v2" 2>&1
    contains "$TMP/v2" "products: openblas"
fi
DRIPLE_KERNELS=own "$DRIPLE" --version >"$TMP/v3" 2>&1
contains "$TMP/v3" "products: own"
DRIPLE_KERNELS=portable "$DRIPLE" --version >"$TMP/v4" 2>&1
contains "$TMP/v4" "kernels: portable level"
# unknown values: one line naming the allowed values, exit 2, whatever the command
allowed="(allowed: auto, own, openblas, portable, avx2, avx512)"
DRIPLE_KERNELS=blas fails 2 "driple: DRIPLE_KERNELS: unknown value 'blas' $allowed" "$DRIPLE" --version
[ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "DRIPLE_KERNELS refusal is not one line"
DRIPLE_KERNELS=blas fails 2 "unknown value 'blas'" "$DRIPLE" predict samples/graphs/alexnet.json --setting V100-P1w2ho-PCIe
fails 2 "unknown --kernels 'blas' (auto, own, openblas, portable, avx2, avx512)" \
    "$DRIPLE" bench predict --random --synthetic 4 --runs 1 --kernels blas
# bench output names the level and the backend
ok "$DRIPLE" bench predict --random --synthetic 4 --runs 1 --kernels own --json
contains "$TMP/out" '"backend": "own"'
ok "$DRIPLE" bench embed --random --synthetic 4 --batch 3 --runs 1 --json
contains "$TMP/out" '"bench": "embed"'
contains "$TMP/out" '"batch": 3'
# auto's table: measured, saved, read by the next run (only beside OpenBLAS)
if [ $blas = 1 ]; then
    ok "$DRIPLE" bench kernels --out "$TMP/k/kernels.json"
    contains "$TMP/out" "shape classes faster on OpenBLAS"
    contains "$TMP/k/kernels.json" '"format": "driple-kernels/1"'
    DRIPLE_KERNELS_TABLE="$TMP/k/kernels.json" "$DRIPLE" --version >"$TMP/v5" 2>&1
    contains "$TMP/v5" "auto's table: measured on this CPU ($TMP/k/kernels.json)"
    # the default place, $XDG_DATA_HOME/driple/kernels.json, is read at start
    mkdir -p "$TMP/xdg/driple" && cp "$TMP/k/kernels.json" "$TMP/xdg/driple/"
    XDG_DATA_HOME="$TMP/xdg" "$DRIPLE" --version >"$TMP/v6" 2>&1
    contains "$TMP/v6" "measured on this CPU ($TMP/xdg/driple/kernels.json)"
    printf '{"format": "driple-kernels/1", "cpu": "x", "level": "avx2", "openblas": "y", "cells": {"nn": "o"}}\n' >"$TMP/bad.json"
    DRIPLE_KERNELS_TABLE="$TMP/bad.json" fails 1 "bad.json:\$.cells.nn: expected 125 characters" "$DRIPLE" --version
else
    fails 1 "OpenBLAS is not in this build" "$DRIPLE" bench kernels --out "$TMP/k.json"
fi
finish
