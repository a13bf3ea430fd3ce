#!/bin/sh
# e2e_tui.sh: the explorer driven through tmux (send-keys, capture-pane): it starts, the table
# shows numbers, a setting without an inspector is marked extrapolated and `t` transfers one in
# the background, `f` saves it (into $DRIPLE_INSPECTORS, a scratch directory here) and the next
# start finds it as a transferred file (as `driple predict --setting` does), q with an unsaved
# transfer asks first, the importance tab renders its graph and `r` computes occlusion in the
# background (q while it runs exits cleanly), `e` exports JSON (replacing a file whole), g
# changes the GPU and the numbers, compare lists every GPU of the catalog, the help opens, a
# resize relays out (and below 80x24 says so), q exits with status 0 and restores the terminal,
# as SIGTERM does (143) and every other catchable signal that ends a process; an unknown TERM
# is reported; NO_COLOR, --no-color and a C locale (ASCII boxes). Bad arguments fail naming the
# file. Saves the screens to $BUILD/screen.txt (README shows a copy).
. tests/lib.sh
. tests/tui_lib.sh
# inspectors saved from the explorer go to (and are found in) a scratch directory
USERDIR="$TMP/user-inspectors"
start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_INSPECTORS='$USERDIR'" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
expect "Prediction: 12 metrics" 30
expect_re "trained (inspector )?V100-P1w2ho-PCIe"
# for the README: the first screen and the compare tab, before anything changed
settle; cp "$TMP/screen" "$TMP/first"
# an inspector trained on simulated labels says so in the header
if [ "$SETTINGS" = assets/settings/default.json ]; then contains "$TMP/first" "data: simulated"; fi
tm send-keys -t e2e c
expect "Compare every GPU"
sleep 1; settle; cp "$TMP/screen" "$TMP/compare"
tm send-keys -t e2e 1
expect "Prediction: 12 metrics"
expect "Derived figures"
# the table shows numbers (predicted or simulated: both are labelled)
if grep -Eq '(pred|sim) +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+' "$TMP/screen"; then pass; else fail "no numbers in the table"; cat "$TMP/screen" >&2; fi
contains "$TMP/screen" "sim"
cp "$TMP/screen" "$TMP/before"
gpu_before=$(sed -n 2p "$TMP/before" | awk '{print $1}')

# a setting without its own inspector: the nearest one, marked, and a transfer in the background
tm send-keys -t e2e w
expect_re "EXTRAPOLATED(: nearest inspector| from) V100-P[0-9]+w[0-9]+ho-PCIe"
tm send-keys -t e2e t
expect_re "transferred V100-P[0-9]+w[0-9]+ho-PCIe -> V100-P1w3ho-PCIe in [0-9.]+ s; f saves it" 120
expect_re "transferred \(unsaved(, f saves)?\) (inspector )?V100-P1w3ho-PCIe"
# f keeps it: written into the user directory, the path in the status line, the header says file
tm send-keys -t e2e f
expect "saved to $USERDIR/V100-PCIe-16GB-P1w3ho-PCIe.json (V100-P1w3ho-PCIe,"
expect_re "transferred \(file\) (inspector )?V100-P1w3ho-PCIe"
if [ -f "$USERDIR/V100-PCIe-16GB-P1w3ho-PCIe.json" ]; then pass; else fail "f: no file in $USERDIR"; fi
# its provenance: transferred, on simulated data
if grep -Eq '"data":[[:space:]]*"simulated"' "$USERDIR/V100-PCIe-16GB-P1w3ho-PCIe.json" &&
   grep -Eq '"origin":[[:space:]]*"transfer"' "$USERDIR/V100-PCIe-16GB-P1w3ho-PCIe.json"; then pass
else fail "the saved inspector does not say transfer on simulated data"; fi
# the importance tab renders the grouped graph (laid out in the background) with importances
tm send-keys -t e2e i
expect_re "importance: [a-z_.]+ = [0-9.e+-]+"
contains "$TMP/screen" "4 Importance"
# r: occlusion importance, computed in the background (the key does not wait), shown once in
tm send-keys -t e2e r
expect_re "importance: [a-z_.]+ = [0-9.e+-]+ .*\(occlusion, [0-9]+ ms\)"
expect_re "importance of [a-z_.]+ by occlusion \([0-9.]+ ms, in the background\)"
tm send-keys -t e2e r
expect_re "importance: [a-z_.]+ = [0-9.e+-]+ .*\(grad, [0-9]+ ms\)"
tm send-keys -t e2e 1
expect "Prediction: 12 metrics"
tm send-keys -t e2e W
expect_re "trained (inspector )?V100-P1w2ho-PCIe"
settle; cp "$TMP/screen" "$TMP/before"

# export: the current predictions as JSON, over an old file once y says so (a hard link to it
# keeps the old content: the export replaces the file whole, not writing over it)
echo "old export" >"$TMP/export.json"
ln "$TMP/export.json" "$TMP/export.old"
tm send-keys -t e2e e C-u
tm send-keys -t e2e -l "$TMP/export.json"
tm send-keys -t e2e Enter
expect "the file exists: overwrite it?"
tm send-keys -t e2e y
expect "predictions written to"
if grep -q '"format": "driple-explore/1"' "$TMP/export.json" 2>/dev/null; then pass; else fail "export: no JSON in $TMP/export.json"; fi
if [ "$(cat "$TMP/export.old")" = "old export" ]; then pass; else fail "export: wrote over the old file in place"; fi

# g: another GPU, other numbers (pressed until the numbers move: neighbouring catalog entries
# can be near twins, V100-PCIe and V100-SXM2)
presses=0; changed=0; gpu_after=$gpu_before
while [ $presses -lt 4 ] && [ $changed -eq 0 ]; do
    tm send-keys -t e2e g; presses=$((presses + 1))
    i=0; while [ $i -lt 50 ]; do settle; g2=$(sed -n 2p "$TMP/screen" | awk '{print $1}'); [ "$g2" != "$gpu_after" ] && break; i=$((i + 1)); done
    gpu_after=$g2
    [ "$(sed -n '4,14p' "$TMP/before")" != "$(sed -n '4,14p' "$TMP/screen")" ] && changed=1
done
if [ -n "$gpu_after" ] && [ "$gpu_after" != "$gpu_before" ]; then pass; else fail "g did not change the GPU ($gpu_before)"; fi
if [ $changed -eq 1 ]; then pass; else fail "g ($presses presses) did not change the numbers"; cat "$TMP/screen" >&2; fi

# compare: every GPU of the catalog (35: a window tall enough to hold them)
tm resize-window -t e2e -x 100 -y 46
tm send-keys -t e2e c
expect "Compare every GPU"
sleep 0.3; tm capture-pane -p -t e2e >"$TMP/screen"
missing=""
for g in $(grep -o '"name": *"[^"]*"' assets/gpus.json | sed 's/.*"\([^"]*\)"$/\1/'); do
    grep -qF -- "$(printf '%.22s' "$g")" "$TMP/screen" || missing="$missing $g"
done
if [ -z "$missing" ]; then pass; else fail "compare lacks:$missing"; cat "$TMP/screen" >&2; fi
tm resize-window -t e2e -x 100 -y 30
tm send-keys -t e2e s
expect "sorted by pred. iteration"

# help, generated from the key table
tm send-keys -t e2e '?'
expect "Help (Esc or ? closes"
expect "next / previous GPU of the catalog"
i=0; while [ $i -lt 40 ]; do tm send-keys -t e2e j; i=$((i + 1)); done
expect "throughput = batch x workers / iteration"
tm send-keys -t e2e Escape
sleep 0.3

# back to the prediction; resize to 80x24 (still laid out), below the minimum (a message), back
tm send-keys -t e2e 1
expect "Prediction: 12 metrics"
tm resize-window -t e2e -x 80 -y 24
expect "One iteration, to scale"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/screen")
lines=$(wc -l <"$TMP/screen")
if [ "$lines" -le 24 ]; then pass; else fail "80x24: $lines lines"; fi
cp "$TMP/screen" "$TMP/screen80"
tm resize-window -t e2e -x 60 -y 20
expect "needs at least 80x24"
tm resize-window -t e2e -x 100 -y 30
expect "Prediction: 12 metrics"
settle
mkdir -p notes
{ echo "driple explore $GRAPH at 100x30, captured by tests/e2e_tui.sh through tmux."
  echo "Inspector: $INSPECTORS."
  echo; cat "$TMP/first"; echo; echo "Compare tab (c):"; echo; cat "$TMP/compare"; } >"${BUILD:-build}/screen.txt"

quit_ok

# the next start finds the saved inspector for that setting (a file now, not extrapolated)
start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_INSPECTORS='$USERDIR'" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
expect "Prediction: 12 metrics" 30
tm send-keys -t e2e w
expect_re "transferred \(file\) (inspector )?V100-P1w3ho-PCIe"
# an unsaved transfer: q asks; Esc stays; q then n quits without saving
tm send-keys -t e2e p
expect_re "EXTRAPOLATED(: nearest inspector| from) V100-P[0-9]+w[0-9]+ho-PCIe"
tm send-keys -t e2e t
expect_re "transferred V100-P[0-9]+w[0-9]+ho-PCIe -> V100-P2w3ho-PCIe" 120
tm send-keys -t e2e q
expect "unsaved transfers: save before quitting? y saves and quits, n quits, Esc stays"
tm send-keys -t e2e Escape
expect "not quitting"
tm send-keys -t e2e q
expect "save before quitting?"
tm send-keys -t e2e n
ended 0 "q, n"
if [ -f "$USERDIR/V100-PCIe-16GB-P2w3ho-PCIe.json" ]; then fail "n saved the transfer"; else pass; fi
# driple predict --setting finds the saved file for a listed setting that names none
printf '{"format": "driple-settings/1", "settings": [{"gpu": "V100-PCIe-16GB", "ps": 1, "workers": 3, "network": "PCIe"}]}\n' >"$TMP/w3.json"
ok env DRIPLE_INSPECTORS="$USERDIR" "$DRIPLE" predict "$GRAPH" --settings "$TMP/w3.json" --setting V100-P1w3ho-PCIe --json
contains "$TMP/out" "\"inspector\": \"$USERDIR/V100-PCIe-16GB-P1w3ho-PCIe.json\""
contains "$TMP/out" '"data": "simulated"'

# NO_COLOR and a non-UTF-8 locale: no colour escapes, ASCII boxes; the importance tab in ASCII
start "NO_COLOR=1 LANG=C LC_ALL=C" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
expect "Prediction: 12 metrics" 30
tm send-keys -t e2e 4
expect_re "importance: [a-z_.]+ = [0-9.e+-]+"
tm send-keys -t e2e 1
expect "Prediction: 12 metrics"
tm capture-pane -e -p -t e2e >"$TMP/esc"
if grep -q "$(printf '\033')\[[0-9;]*3[0-7]m" "$TMP/esc"; then fail "NO_COLOR: colour escapes on screen"; else pass; fi
contains "$TMP/screen" "+ Prediction: 12 metrics"
if grep -q "┌" "$TMP/screen"; then fail "C locale: UTF-8 box drawing"; else pass; fi
# q while occlusion runs in the background: it is waited for, the exit is clean
tm send-keys -t e2e 4 r q
ended 0 "q while occlusion runs"
# --no-color in a UTF-8 locale: no colour escapes, UTF-8 boxes
start "LANG=C.UTF-8 LC_ALL=C.UTF-8" "'$BIN' explore '$GRAPH' --settings '$SETTINGS' --no-color"
expect "Prediction: 12 metrics" 30
tm capture-pane -e -p -t e2e >"$TMP/esc"
if grep -q "$(printf '\033')\[[0-9;]*3[0-7]m" "$TMP/esc"; then fail "--no-color: colour escapes on screen"; else pass; fi
contains "$TMP/screen" "┌ Prediction: 12 metrics"
quit_ok
# the default: colours; SIGTERM ends it through endwin with status 128 + 15
start "LANG=C.UTF-8 LC_ALL=C.UTF-8" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
expect "Prediction: 12 metrics" 30
tm capture-pane -e -p -t e2e >"$TMP/esc"
if grep -q "$(printf '\033')\[[0-9;]*3[0-7]m" "$TMP/esc"; then pass; else fail "no colour escapes by default"; fi
kill -TERM "$(cat "$TMP/pid")"
ended 143 "SIGTERM"
# every other catchable signal that ends a process gives the terminal back too (the shell
# reports 128 + the signal); SIGKILL cannot be caught: README says to type `reset`
for sn in INT:2 HUP:1 QUIT:3 USR1:10 USR2:12 ALRM:14 PIPE:13 XCPU:24 XFSZ:25 VTALRM:26 PROF:27; do
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8" "'$BIN' explore samples/graphs/alexnet.json --settings '$SETTINGS'"
    expect "Prediction: 12 metrics" 30
    kill -"${sn%:*}" "$(cat "$TMP/pid")"
    ended $((128 + ${sn#*:})) "SIG${sn%:*}"
done
# a terminal type terminfo does not know: our message, not ncurses' own
start "LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=driple-no-such-terminal" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
expect "the terminal type 'driple-no-such-terminal' (TERM) is unknown" 30
i=0; while [ ! -f "$TMP/rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ "$(cat "$TMP/rc" 2>/dev/null)" = 1 ]; then pass; else fail "unknown TERM: exit status '$(cat "$TMP/rc" 2>/dev/null)'"; fi
tm kill-server >/dev/null 2>&1

# a bad graph: an error naming the file, non-zero exit, before the screen is touched
fails 1 "does-not-exist.json" "$DRIPLE" explore tests/data/graph/does-not-exist.json
fails 2 "--batch" "$DRIPLE" explore "$GRAPH" --batch 0
# not a terminal: a clear message
fails 1 "needs a terminal" "$DRIPLE" explore "$GRAPH"
# the key-latency benchmark runs without a terminal
ok "$DRIPLE" explore "$GRAPH" --bench-keys 40 --json
contains "$TMP/out" "\"p95_ms\""
finish
