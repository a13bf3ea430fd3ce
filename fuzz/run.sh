#!/bin/sh
# run.sh: builds every fuzz/fuzz_<name>.c as a libFuzzer binary (clang, ASan + UBSan) against the
# engine sources and runs each for FUZZ_SECONDS (default 30) from a seed corpus. Seeds: the
# directories listed for <name> below, plus fuzz/seeds/<name>/ when it exists; a dictionary
# fuzz/<name>.dict or the format's (json.dict, pbtxt.dict) when present. Findings (crash-*,
# leak-*, timeout-*) land in $FUZZ_OUT/findings/<name>/ and make the script fail.
# Usage: sh fuzz/run.sh [NAME...]   (FUZZ_SECONDS=5 sh fuzz/run.sh graph_json); FUZZ_TIMEOUT sets the
# per-input limit in seconds (default 10), FUZZ_OUT the output folder (default build-fuzz).
set -u
CC=${FUZZ_CC:-clang}
SECONDS_EACH=${FUZZ_SECONDS:-30}
OUT=${FUZZ_OUT:-build-fuzz}
TIMEOUT=${FUZZ_TIMEOUT:-10}
command -v "$CC" >/dev/null 2>&1 || { echo "fuzz: $CC not found (install clang)" >&2; exit 1; }
FLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 -fno-omit-frame-pointer \
 -fsanitize=address,undefined -fno-sanitize-recover=all -Iengine/include -Iengine/src -Itui \
 $(pkg-config --cflags libcjson libgvc 2>/dev/null)"
LIBS="$(pkg-config --libs libcjson libgvc 2>/dev/null) -lm -lpthread -ldl"
mkdir -p "$OUT/obj" "$OUT/findings"

# The engine, instrumented for coverage; a file that does not build is reported and left out
# (the archive only pulls what a target needs).
# Objects are written to a temporary name and moved into place, and each run links its own
# archive, so two runs at once (different targets) do not trip over each other.
LIBA="$OUT/libdp-fuzz.$$.a"
trap 'rm -f "$LIBA"' EXIT
for src in engine/src/*/*.c; do
    base=$(basename "$src" .c); obj="$OUT/obj/$base.o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find engine/include engine/src -name '*.h' -newer "$obj" 2>/dev/null | head -n 1)" ]; then
        if $CC $FLAGS -fsanitize=fuzzer-no-link -w -c "$src" -o "$obj.$$" 2>"$OUT/obj/$base.log"; then
            mv -f "$obj.$$" "$obj"
        else
            echo "fuzz: note: $src does not build with $CC; left out" >&2; rm -f "$obj.$$" "$obj"; continue
        fi
    fi
done
objs=""
for src in engine/src/*/*.c; do
    obj="$OUT/obj/$(basename "$src" .c).o"; [ -f "$obj" ] && objs="$objs $obj"
done
# shellcheck disable=SC2086
ar rcs "$LIBA" $objs

seeds_for() {
    case "$1" in
    graph_json) echo "tests/data/graph tests/data/fuzz/graph_json" ;;
    pbtxt)      echo "tests/data/graph tests/data/fuzz/pbtxt" ;;
    grouped)    echo "../shared/reference/cases/gcn tests/data/graph tests/data/fuzz/grouped" ;;
    onnx)       echo "tests/data/onnx tests/data/fuzz/onnx" ;;
    graphdef)   echo "tests/data/graph tests/data/fuzz/graphdef" ;;
    op_weights) echo "assets tests/data/fuzz/op_weights" ;;
    trace)      echo "samples/traces tests/data/fuzz/trace" ;;
    netdev)     echo "tests/data/record tests/data/fuzz/netdev" ;;
    torch)      echo "" ;; # whole archives need a leading odd byte: see fuzz/seeds/torch/
    *)          echo "tests/data/fuzz/$1" ;;
    esac
}
dict_for() {
    if [ -f "fuzz/$1.dict" ]; then echo "fuzz/$1.dict"; return; fi
    case "$1" in
    pbtxt*) echo fuzz/pbtxt.dict ;;
    *json*|grouped*|*weights*) echo fuzz/json.dict ;;
    *) echo "" ;;
    esac
}

status=0
targets=${*:-$(for f in fuzz/fuzz_*.c; do n=$(basename "$f" .c); echo "${n#fuzz_}"; done)}
for name in $targets; do
    src="fuzz/fuzz_$name.c"
    [ -f "$src" ] || { echo "fuzz: no $src" >&2; status=1; continue; }
    bin="$OUT/fuzz_$name"
    if ! $CC $FLAGS -fsanitize=fuzzer "$src" "$LIBA" $LIBS -o "$bin"; then
        echo "fuzz: $src: build failed" >&2; status=1; continue
    fi
    corpus="$OUT/corpus/$name"; find_dir="$OUT/findings/$name"
    mkdir -p "$corpus" "$find_dir"
    dirs=""
    for d in $(seeds_for "$name") "fuzz/seeds/$name"; do [ -d "$d" ] && dirs="$dirs $d"; done
    dict=$(dict_for "$name")
    echo "fuzz: $name for ${SECONDS_EACH}s (seeds:${dirs:- none})"
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$find_dir/" ${dict:+-dict=$dict} \
        "$corpus" $dirs >"$OUT/fuzz_$name.log" 2>&1
    rc=$?
    tail -n 12 "$OUT/fuzz_$name.log" | grep -E "stat::number_of_executed_units|stat::new_units_added|SUMMARY|ERROR" || true
    if [ $rc -ne 0 ] || ls "$find_dir" | grep -q .; then
        echo "fuzz: $name FAILED (exit $rc); see $OUT/fuzz_$name.log and $find_dir/" >&2
        status=1
    else
        echo "fuzz: $name ok"
    fi
done
exit $status
