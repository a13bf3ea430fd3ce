#!/bin/sh
# Runs every test binary given, then every tests/e2e_*.sh, from the repository root. Each prints
# "<name>: N passed, M failed"; this adds them up and fails if any test failed or crashed.
# DRIPLE is the binary under test. Set TESTS=pattern to run a subset. The tests that check the
# network against the reference data (../shared/reference) run again under each product backend
# forced (DRIPLE_KERNELS=auto, openblas; the first run is the default, own).
passed=0; failed=0; broken=""
run_one() {
    out=$("$@" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    p=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/'); p=${p:-0}
    f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/'); f=${f:-0}
    if [ $rc -ne 0 ] || [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -n 40
        [ "$f" -eq 0 ] && f=1
        broken="$broken $1"
    else
        printf '%s%s\n' "${label:-}" "$line"
    fi
    passed=$((passed + p)); failed=$((failed + f))
}
for t in "$@"; do
    case "$t" in *${TESTS:-}*) run_one "$t" ;; esac
done
for be in auto openblas; do
    for t in "$@"; do
        case "$t" in
            *test_parity|*test_kernels|*test_inspector|*test_torch|*test_model_bench)
                case "$t" in *${TESTS:-}*) label="DRIPLE_KERNELS=$be " run_one env DRIPLE_KERNELS=$be "$t" ;; esac ;;
        esac
    done
done
label=""
for s in tests/e2e_*.sh; do
    [ -f "$s" ] || continue
    case "$s" in *${TESTS:-}*) run_one sh "$s" ;; esac
done
[ -n "$broken" ] && echo "failing:$broken"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
