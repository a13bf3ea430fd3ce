#!/bin/sh
# e2e_readme.sh: every command README.md and docs/*.md show runs as written, in a scratch
# directory for their outputs (samples/, tests/ and assets/ reached through links; ../shared as
# the checkout's): each `driple ...` line of a ```sh block, and each `$ driple ...` line of a
# ```console block, whose output must be what the block shows. A block after a line
# "<!-- not run: WHY -->" is skipped (a GPU machine's recording); one of a command this build
# lacks is skipped while `driple help` does not list it (plan, filled in at merge).
. tests/lib.sh
ROOT=$(pwd)
case "$DRIPLE" in /*) BIN=$DRIPLE ;; *) BIN=$ROOT/$DRIPLE ;; esac
mkdir -p "$TMP/run"
for d in samples tests assets; do ln -s "$ROOT/$d" "$TMP/run/$d"; done
"$BIN" help >"$TMP/commands"
# one script per command: NAME.cmd (the line), NAME.want (a console block's output)
awk -v dir="$TMP" '
    /^<!-- not run:/ { skip = 1; next }
    /^```(sh|console)$/ { inblock = 1; console = ($0 ~ /console/); next }
    /^```/ && inblock { inblock = 0; skip = 0; cur = ""; next }
    !inblock { next }
    skip { next }
    console && /^\$ driple / { n++; cur = dir "/c" sprintf("%03d", n); print substr($0, 3) > (cur ".cmd"); printf "" > (cur ".want"); next }
    console && cur != "" { print >> (cur ".want"); next }
    !console && /^driple / { n++; print > (dir "/c" sprintf("%03d", n) ".cmd") }
' README.md docs/*.md
n=0
for cmd in "$TMP"/c*.cmd; do
    [ -f "$cmd" ] || continue
    n=$((n + 1))
    line=$(cat "$cmd")
    sub=$(printf '%s' "$line" | awk '{print $2}')
    if ! grep -q "^  $sub " "$TMP/commands"; then
        echo "note: '$sub' is not in this build's command list; skipped: $line"
        continue
    fi
    run=$(printf '%s' "$line" | sed "s|^driple |\"\$BIN\" |; s|\\.\\./shared/|$ROOT/../shared/|g")
    (cd "$TMP/run" && BIN="$BIN" sh -c "$run") >"$TMP/out" 2>"$TMP/err" && pass ||
        fail "exit $?: $line :: $(head -c 300 "$TMP/err")"
    want=${cmd%.cmd}.want
    if [ -f "$want" ]; then
        cmp -s "$want" "$TMP/out" && pass || fail "the output of '$line' is not what the docs show: $(diff "$want" "$TMP/out" | head -5)"
    fi
done
[ $n -ge 10 ] && pass || fail "only $n commands found in README.md and docs/"
# every command the README's tour names exists (help lists it)
for c in explore graph zoo simulate calibrate trace record dataset train transfer predict compare explain inspector bench; do
    contains "$TMP/commands" "  $c "
done
# README is the front door: at most 250 lines
[ "$(wc -l <README.md)" -le 250 ] && pass || fail "README.md has more than 250 lines"
# docs/reliability.md states the limits, the memory caps, what a kill leaves behind, and `reset`
# for the terminal after a SIGKILL
for needle in "largest file" "Memory caps, checked before allocating" "What a kill leaves behind: nothing" \
    "DRIPLE_MAX_INPUT" "type \`reset\`"; do
    contains docs/reliability.md "$needle"
done
# every docs/ page README links to exists
for f in $(grep -o 'docs/[a-z]*\.md' README.md | sort -u); do
    [ -f "$f" ] && pass || fail "README links to $f, which is missing"
done
finish
