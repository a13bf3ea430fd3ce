#!/bin/sh
# check_layers.sh: the layers of driple point one way, checked on the sources and on the built
# objects (README, Development: "Layers"). Run by `make test` (tests/e2e_layers.sh); by hand:
#   sh tools/check_layers.sh [BUILD]      (BUILD: the build directory, default build)
# 1. Between engine subsystems (engine/src/<sub>/), every link-level reference (a symbol one
#    subsystem's objects use and another's define) and every private include ("<sub>/x.h")
#    goes from a higher rank to a lower one (the order below); a subsystem not in the order
#    fails until it is placed.
# 2. The engine never includes curses; the front ends (cli/, tui/) include only the engine's
#    public headers (dp/*.h) and their own, never engine/src; tui/ includes nothing of cli/
#    (cli/cmd_explore.c starts the explorer through tui/explore.h).
# 3. Tests write their scratch files under $BUILD (test_path, tests/test.h), never "build/".
# 4. No source file is over 800 lines without the reason at its top: a line "Over 800 lines
#    on purpose: <why>" in its first 25 lines (else split it where it holds several concepts).
# Prints each violation; exits 1 when there is one.
BUILD=${1:-${BUILD:-build}}
status=0
say() { echo "check_layers: $*" >&2; status=1; }

# The order, lowest first: a subsystem may use only those of lower rank.
rank() {
    case $1 in
    core) echo 0 ;;                  # status, graph model, JSON, files, metrics, shipped files
    ops) echo 1 ;;                   # per-op-type knowledge: cost, weights
    cluster | measure) echo 2 ;;     # GPU catalog and settings; traces and recording
    tfgraph) echo 3 ;;               # the training-graph builder
    zoo | io) echo 4 ;;              # model zoo and generator; graph readers
    coarsen | sim) echo 5 ;;         # grouping and features; the simulator
    gnn | plan) echo 6 ;;            # inspectors (reads published checkpoints through io); the
                                     # closed-form LLM planner (on the simulator's collectives)
    train | render) echo 7 ;;        # datasets and training; Graphviz drawings of explanations
    session) echo 8 ;;               # the what-if layer both front ends call
    *) echo -1 ;;
    esac
}
# edge FROM TO WHAT: one reference, checked against the order.
edge() {
    A=$1 B=$2
    ra=$(rank "$A") rb=$(rank "$B")
    if [ "$ra" -lt 0 ] || [ "$rb" -lt 0 ]; then
        say "engine/src/$( [ "$ra" -lt 0 ] && echo "$A" || echo "$B"): not in the order (tools/check_layers.sh)"
    elif [ "$ra" -le "$rb" ]; then
        say "$A -> $B goes up or sideways ($3)"
    fi
}

# ---- 1a. link-level references between subsystems ----
# only objects whose source still exists: a build directory keeps those of removed files
objs=$(for o in "$BUILD"/engine/src/*/*.o; do
    s=${o#"$BUILD"/}; [ -f "${s%.o}.c" ] && echo "$o"
done 2>/dev/null)
if [ -z "$objs" ]; then
    say "no objects under $BUILD/engine/src (build first)"
else
    # "from to symbol", one line per subsystem pair (the first symbol found)
    nm -A -P $objs 2>/dev/null | awk '
        { file = $1; sub(/:$/, "", file); n = split(file, p, "/"); sub_ = p[n - 1]
          sym = $2; type = $3 }
        type ~ /^[TDBRCV]$/ { def[sym] = sub_ }
        type == "U" { use[++nu] = sub_ " " sym }
        END {
            for (i = 1; i <= nu; i++) {
                split(use[i], u, " ")
                d = def[u[2]]
                if (d != "" && d != u[1] && !((u[1] " " d) in seen)) {
                    seen[u[1] " " d] = 1
                    print u[1], d, u[2]
                }
            }
        }' | sort >"${TMPDIR:-/tmp}/check_layers.$$"
    while read -r from to sym; do
        edge "$from" "$to" "links $sym"
    done <"${TMPDIR:-/tmp}/check_layers.$$"
    rm -f "${TMPDIR:-/tmp}/check_layers.$$"
fi

# ---- 1b. private includes between subsystems ----
for f in engine/src/*/*.c engine/src/*/*.h; do
    from=$(basename "$(dirname "$f")")
    for to in $(sed -n 's|^#include "\([a-z_]*\)/[^"]*".*|\1|p' "$f" | grep -v '^dp$' | sort -u); do
        [ "$to" = "$from" ] || edge "$from" "$to" "$f includes $to/"
    done
done

# ---- 2. the engine without curses; the front ends through dp/ only ----
cursed=$(grep -l '#include *<n*curses' engine/include/dp/*.h engine/src/*/*.[ch] 2>/dev/null)
[ -z "$cursed" ] || say "the engine includes curses: $cursed"
for f in cli/*.[ch] tui/*.[ch] tui/views/*.[ch]; do
    for inc in $(sed -n 's|^#include "\([^"]*\)".*|\1|p' "$f"); do
        case "$f:$inc" in
        *:dp/*.h | cli/cmd_explore.c:../tui/explore.h | tui/*:views/*.h) ;;
        *:*/*) say "$f: #include \"$inc\": the front ends use only the engine's dp/ headers and their own" ;;
        tui/*:cli.h | tui/*:cmd.h | tui/*:cmd_util.h | tui/*:train_run.h)
            say "$f: #include \"$inc\": the explorer does not use cli/" ;;
        esac
    done
done

# ---- 3. scratch files under $BUILD ----
if grep -n '"build/\(tests\|tmp\)' tests/*.c tests/*.h 2>/dev/null | grep -v 'test.h:.*"build"' >/dev/null; then
    say "tests write to build/ by name (use test_path, tests/test.h): $(grep -ln '"build/\(tests\|tmp\)' tests/*.c | tr '\n' ' ')"
fi

# ---- 4. long files say why ----
for f in engine/include/dp/*.h engine/src/*/*.[ch] cli/*.[ch] tui/*.[ch] tui/views/*.[ch] \
         tests/*.[ch] tests/tape/*.[ch] fuzz/*.[ch]; do
    [ -f "$f" ] || continue
    n=$(wc -l <"$f")
    [ "$n" -le 800 ] && continue
    head -n 25 "$f" | grep -q 'Over 800 lines on purpose:' ||
        say "$f: $n lines and no reason at its top (\"Over 800 lines on purpose: why\" in its first comment), or split it"
done

[ $status -eq 0 ] && echo "check_layers: the layers point one way"
exit $status
