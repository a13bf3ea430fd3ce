#!/bin/sh
# e2e_readme.sh: the examples that README.md shows run as written (in a scratch directory for
# their outputs), so the user's door never shows a command that fails.
. tests/lib.sh
ok "$DRIPLE" zoo build bert_base --batch 32 --optimizer adam -o "$TMP/bert.json"
ok "$DRIPLE" graph info "$TMP/bert.json"
ok "$DRIPLE" predict "$TMP/bert.json" --setting A100-P2w8ho-100GbE --json
contains "$TMP/out" '"metrics"'
ok "$DRIPLE" compare "$TMP/bert.json"
ok "$DRIPLE" simulate "$TMP/bert.json" --gpu H100-SXM --workers 8 --ps 2 --network 100GbE --json
contains "$TMP/out" '"simulated"'
ok "$DRIPLE" explain "$TMP/bert.json" --setting A100-P2w8ho-100GbE --metric gpu_util.active --svg "$TMP/bert.svg"
contains "$TMP/bert.svg" "<svg"
ok "$DRIPLE" inspector import-torch ../shared/reference/driple_pretrain_gcn.pkl --layer gcn -o "$TMP/published.json"
# every command the README names exists (help lists it)
ok "$DRIPLE" help
for c in explore graph zoo simulate calibrate trace record dataset train transfer predict compare explain inspector bench; do
    contains "$TMP/out" "  $c "
done
# the Reliability section states the limits, the memory caps, what a kill leaves behind, and
# `reset` for the terminal after a SIGKILL
sed -n '/^## Reliability/,/^## /p' README.md >"$TMP/reliability"
for needle in "largest file" "Memory caps, checked before allocating" "What a kill leaves behind: nothing" \
    "DRIPLE_MAX_INPUT" "type \`reset\`"; do
    contains "$TMP/reliability" "$needle"
done
finish
