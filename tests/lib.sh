# lib.sh: helpers for the end-to-end shell tests. Source it; call ok/fails/contains, then finish.
# DRIPLE is the binary under test (default build/driple); TMP a scratch directory removed at exit.
DRIPLE=${DRIPLE:-build/driple}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T_PASS=0; T_FAIL=0
pass() { T_PASS=$((T_PASS + 1)); }
fail() { T_FAIL=$((T_FAIL + 1)); echo "FAIL: $*" >&2; }
# ok CMD...: the command exits 0.
ok() { if "$@" >"$TMP/out" 2>"$TMP/err"; then pass; else fail "exit $?: $* :: $(head -c 400 "$TMP/err")"; fi; }
# fails CODE NEEDLE CMD...: exits with CODE and stderr contains NEEDLE (file and place).
fails() {
    code=$1; needle=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ $rc -eq "$code" ] && grep -qF -- "$needle" "$TMP/err"; then pass
    else fail "expected exit $code with '$needle', got $rc: $* :: $(head -c 400 "$TMP/err")"; fi
}
# contains FILE NEEDLE: the file holds the text.
contains() { if grep -qF -- "$2" "$1"; then pass; else fail "$1 lacks '$2'"; fi; }
finish() { echo "$(basename "$0"): $T_PASS passed, $T_FAIL failed"; [ $T_FAIL -eq 0 ]; }
