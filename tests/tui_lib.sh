# tui_lib.sh: driving the explorer through tmux for the end-to-end tests (source after lib.sh):
# a tmux server per run (start), waiting for text on the screen (expect, expect_re), the
# terminal given back at the end (ended), and what every screen must be: nothing cut mid-word
# (cut_words). $GRAPH is the graph to open, $BIN the explorer's binary.
if ! command -v tmux >/dev/null 2>&1; then
    echo "$(basename "$0"): tmux is not installed (apt-get install tmux): the explorer is NOT tested" >&2
    fail "tmux missing"
    finish
    exit 1
fi
# one tmux server (socket) per explorer run: a server still shutting down never meets the next
N=0; SOCK="driple_e2e_$$_0"
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'for k in $(seq 0 $N); do tmux -L "driple_e2e_$$_$k" kill-server >/dev/null 2>&1; done; rm -rf "$TMP"' EXIT
# a real model's graph when the samples are there (the small test graph is latency-bound: its
# numbers barely move between GPUs)
GRAPH=${E2E_GRAPH:-samples/graphs/resnet50.json}
[ -f "$GRAPH" ] || GRAPH=tests/data/graph/small.json
BIN=$(cd "$(dirname "$DRIPLE")" && pwd)/$(basename "$DRIPLE")

# wait_for TEXT [SECONDS]: polls the pane until it shows TEXT; the screen is left in $TMP/screen.
wait_for() {
    i=0; n=$(( ${2:-15} * 10 ))
    while [ $i -lt $n ]; do
        tm capture-pane -p -t e2e >"$TMP/screen" 2>/dev/null
        grep -qF -- "$1" "$TMP/screen" && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# wait_re REGEX [SECONDS [LINES]]: the same with an extended regular expression, matched by at
# least LINES lines (1): a frame is captured whole only once the terminal has drawn all of it.
wait_re() {
    i=0; n=$(( ${2:-15} * 10 ))
    while [ $i -lt $n ]; do
        tm capture-pane -p -t e2e >"$TMP/screen" 2>/dev/null
        [ "$(grep -cE -- "$1" "$TMP/screen")" -ge "${3:-1}" ] && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
expect_re() { if wait_re "$1" "${2:-15}"; then pass; else fail "screen lacks /$1/:"; cat "$TMP/screen" >&2; fi; }
# expect TEXT [SECONDS]: a check that the pane shows TEXT.
expect() { if wait_for "$1" "${2:-15}"; then pass; else fail "screen lacks '$1':"; cat "$TMP/screen" >&2; fi; }
settle() { sleep 0.4; tm capture-pane -p -t e2e >"$TMP/screen"; }

# run.sh: records the explorer's pid (for the signal test), then becomes it
printf '#!/bin/sh\necho $$ >"%s/pid"\nexec "$@"\n' "$TMP" >"$TMP/run.sh"
start() { # start ENV CMD: a session (COLSxROWS: $TUI_COLS x $TUI_ROWS, 100x30 by default)
          # running the explorer; its exit status to $TMP/rc, then the pane stays a few seconds
          # for inspection
    rm -f "$TMP/rc" "$TMP/pid"
    N=$((N + 1)); SOCK="driple_e2e_$$_$N"
    tm new-session -d -s e2e -x "${TUI_COLS:-100}" -y "${TUI_ROWS:-30}" \
        "cd '$PWD' && env $1 sh '$TMP/run.sh' $2; rc=\$?; stty -a >'$TMP/stty' 2>&1; echo \$rc >'$TMP/rc'; sleep 5"
}
# ended CODE WHAT: the explorer exited with CODE and gave the terminal back: the alternate screen
# left, mouse reporting and keypad mode off, the cursor shown, and the tty cooked again (stty -a
# run in the pane after it: icanon and echo, not -icanon -echo)
ended() {
    i=0; while [ ! -f "$TMP/rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    if [ -f "$TMP/rc" ] && [ "$(cat "$TMP/rc")" = "$1" ]; then pass; else fail "$2: exit status '$(cat "$TMP/rc" 2>/dev/null)', expected $1"; fi
    st=$(tm display-message -p -t e2e 'alt=#{alternate_on} mouse=#{mouse_any_flag}#{mouse_standard_flag}#{mouse_button_flag}#{mouse_all_flag} keypad=#{keypad_flag} cursor=#{cursor_flag}' 2>/dev/null)
    if [ "$st" = "alt=0 mouse=0000 keypad=0 cursor=1" ]; then pass; else fail "$2: the terminal was not restored ($st)"; fi
    if grep -Eq -- '(^| )icanon( |$)' "$TMP/stty" && grep -Eq -- '(^| )echo( |$)' "$TMP/stty"; then pass
    else fail "$2: the tty was left raw: $(grep -Eo -- '-?icanon|-?echo ' "$TMP/stty" | tr '\n' ' ')"; fi
    tm kill-server >/dev/null 2>&1
}
quit_ok() { tm send-keys -t e2e q; ended 0 "q"; }

# An inspector for V100-P1w2ho-PCIe (the published GCN weights, imported) beside a copy of the
# default setting list, whose paths are relative: the other settings have no inspector file.
# (When `make assets` has shipped the inspectors, those are used instead.)
if [ -f assets/inspectors/V100-P1w2ho-PCIe.json ]; then
    SETTINGS=assets/settings/default.json
    INSPECTORS="the shipped inspectors (assets/inspectors, trained on simulated data)"
else
    FIX="$TMP/fix"; mkdir -p "$FIX/settings" "$FIX/inspectors"
    cp assets/settings/default.json "$FIX/settings/default.json"
    ok "$DRIPLE" inspector import-json ../shared/reference/gcn_pretrained_weights.json \
        --setting V100-P1w2ho-PCIe -o "$FIX/inspectors/V100-P1w2ho-PCIe.json"
    SETTINGS="$FIX/settings/default.json"
    INSPECTORS="the published GCN imported with scales 1 (its outputs are normalised values)"
fi

# cut_words FILE [WIDTH]: the lines of a captured screen where text runs into the screen's
# right edge (an alphanumeric character in its last column) or into a box's right border (one
# right before "│"): cut mid-word. The explorer keeps a column free before each; what it elides
# ends in "…". Prints the offending lines; false when there is none.
cut_words() {
    LC_ALL=C.UTF-8 grep -nP -- "^.{$((${2:-${TUI_COLS:-100}} - 1))}[[:alnum:]]\$|[[:alnum:]]\x{2502}" "$1"
}
# no_cut WHAT: a check that the last screen ($TMP/screen) has no line cut mid-word.
no_cut() {
    if cut_words "$TMP/screen" >"$TMP/cut"; then fail "$1: text cut mid-word:"; cat "$TMP/cut" >&2
    else pass; fi
}
