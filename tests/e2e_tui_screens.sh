#!/bin/sh
# e2e_tui_screens.sh: the explorer as a planner uses it (issue 16), through tmux at 80x24 and at
# 200x50: every screen (predict, help page by page, compare in its three modes, groups and a
# search, importance zoomed in, scaling, prompts, long messages) has no line cut mid-word, no
# box on the importance canvas covers another, and every setting id shown is accepted back by
# --setting and names one setting; Tab leaves Predict at once and Left/Right walk its panes;
# Esc clears a search; a message does not outlive its tab; the marked-GPU filter stays in the
# every-GPU view; sync and framework keys; sorting by cost (each GPU's catalog price) is not
# sorting by time; the simulator's reason whole;
# compare hides out-of-memory rows, exports CSV beside JSON, asks before overwriting a file;
# the dataset prompt reads 1.2M; one batch limit; the export's dataset size; the scaling tab
# states the largest batch that fits; long op names elided in the middle (the tail that tells
# them apart kept) and scrolled sideways; ASCII levels under LANG=C; "mem-ctrl" for the memory
# controller; `driple explore --setting ID | --gpu ...` opens at that cluster; the setting-aware
# inspector's source, intervals and out-of-distribution mark.
. tests/lib.sh
. tests/tui_lib.sh

USERDIR="$TMP/user-inspectors"
: >"$TMP/ids"
# shot WHAT: the screen now (after the last expect) has no line cut, and its ids are kept
shot() {
    settle
    no_cut "$TUI_COLS x $TUI_ROWS: $1"
    grep -oE '[A-Za-z0-9][A-Za-z0-9.]*(-[A-Za-z0-9.]+)*-(P[0-9]+w[0-9]+h[eo]|AR[0-9]+)-(PCIe|NVLink|[0-9]+GbE|IB-EDR|IB-HDR|IB-NDR)(-M[0-9]+(x[0-9]+)?)?(-pytorch)?(-mixed)?' \
        "$TMP/screen" >>"$TMP/ids"
}
key() { tm send-keys -t e2e "$@"; }
# gpu_order: the GPU names of the compare rows on the screen, top to bottom
gpu_order() {
    sed -n '/GPU \/ setting/,$p' "$TMP/screen" | sed 1d |
        awk '/^ / { for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z0-9]/) { print $i; break } }'
}
# boxes_apart WHAT: a check that no box on the importance canvas (rows 5 .. ROWS-2, above the
# list's separator when the list is below, left of its border when beside) covers another:
# every top and bottom border that starts on the canvas runs unbroken to its corner or to the
# canvas's edge; and that a wide canvas zoomed in shows boxes at all
boxes_apart() {
    if LC_ALL=C.UTF-8 sed -n "5,$((TUI_ROWS - 2))p" "$TMP/screen" | LC_ALL=C.UTF-8 sed '/^─\{10,\}$/,$d' |
        { if grep -q '^─\{10,\}$' "$TMP/screen"; then cat; else LC_ALL=C.UTF-8 sed 's/│[^│]*$//'; fi; } |
        LC_ALL=C.UTF-8 grep -nP '┌─*[^─┐]|└─*[^─┘]' >"$TMP/cut"; then
        fail "$1: boxes cover each other:"; cat "$TMP/cut" >&2
    else pass; fi
    if [ "$TUI_COLS" -lt 160 ] || [ "$(grep -o '┌' "$TMP/screen" | wc -l)" -ge 3 ]; then pass
    else fail "$1: no boxes on a wide canvas zoomed in"; cat "$TMP/screen" >&2; fi
}
# canvas_off: the importance tab's screen without its canvas: the lines between the pane's
# header and the separator (narrow), or what lies left of the list's border (wide)
canvas_off() {
    awk -v rows="$TUI_ROWS" '
        { line[NR] = $0 }
        /^(─)+$/ { sep = NR }
        END {
            for (i = 1; i <= NR; i++) {
                if (i >= 5 && i <= rows - 2) {
                    if (sep) { if (i <= sep) continue }
                    else sub(/.*│/, "", line[i])
                }
                print line[i]
            }
        }' "$TMP/screen" >"$TMP/screen.list" && mv "$TMP/screen.list" "$TMP/screen"
}

for size in 80x24 200x50; do
    TUI_COLS=${size%x*}; TUI_ROWS=${size#*x}
    # the per-setting inspectors (importance explains one; t transfers one): --setting-aware none
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_INSPECTORS='$USERDIR'" "'$BIN' explore '$GRAPH' --settings '$SETTINGS' --setting-aware none"
    expect "Prediction: 12 metrics" 30
    expect "Derived figures"
    shot "predict"
    # the memory controller is not memory occupancy
    contains "$TMP/screen" "mem-ctrl"
    if grep -q "gpu mem" "$TMP/screen"; then fail "$size: 'gpu mem' reads as occupancy"; else pass; fi
    # the start's long message wraps, whole (at 80 columns over two lines)
    expect "52 settings"
    contains "$TMP/screen" "inspector file"
    # Tab leaves Predict at once, whichever pane; Left/Right walk the panes
    key Right
    settle
    key Tab
    expect "Compare every GPU"
    shot "compare, every GPU"
    # a message does not outlive its tab: the predict tab's is gone, compare's hint is there
    contains "$TMP/screen" "Compare: s sort"
    # each GPU at its own catalog price: sorting by cost is not sorting by time
    key s
    expect "sorted by predicted iteration"
    settle; gpu_order >"$TMP/by-time"
    key s
    expect "sorted by predicted cost"
    settle; gpu_order >"$TMP/by-cost"
    shot "compare, sorted by cost"
    if [ "$(wc -l <"$TMP/by-cost")" -ge 10 ] && ! cmp -s "$TMP/by-time" "$TMP/by-cost"; then pass
    else fail "$size: sort by cost = sort by time: $(tr '\n' ' ' <"$TMP/by-cost")"; fi
    key s s
    expect "sorted by predicted throughput"
    # every setting, then every sync/framework/network of this GPU
    key c
    expect "Compare every setting"
    shot "compare, every setting"
    key c
    expect_re "every sync, framework|every option"
    shot "compare, every option"
    key c
    expect "Compare every GPU"
    # the marked-GPU filter belongs to the every-GPU view only
    key Space M
    expect "marked GPUs only"
    key c
    expect "Compare every setting"
    if wait_re ' [A-Za-z0-9]+-(P[0-9]+w[0-9]+h[oe]|AR[0-9]+)-' 15 $((TUI_ROWS - 8)); then pass
    else fail "$size: every setting: too few rows"; cat "$TMP/screen" >&2; fi
    if grep -q "marked" "$TMP/screen"; then fail "$size: the marked filter leaked into every setting"; else pass; fi
    key c c M
    expect "every GPU"
    # out-of-memory rows: marked, then hidden (batch 1024 does not fit most GPUs)
    key b C-u 1024 Enter
    expect "batch 1024"
    key 2
    expect_re "[0-9]!"
    key O
    expect "out of memory hidden"
    settle
    if grep -Eq '[0-9]!' "$TMP/screen"; then fail "$size: O left rows out of memory"; else pass; fi
    shot "compare, out of memory hidden"
    key O b C-u 64 Enter
    expect "batch 64"
    # CSV beside JSON; an existing file is not overwritten without asking
    key 2 E C-u
    key -l "$TMP/rows-$size.csv"
    key Enter
    expect "compare rows written to"
    if head -1 "$TMP/rows-$size.csv" | grep -q "^row,id,gpu,source,iteration_ms,throughput"; then pass
    else fail "$size: CSV export: $(head -2 "$TMP/rows-$size.csv")"; fi
    # memory_gb is the predicted footprint (the simulator's where nothing predicts it), the
    # simulator's beside it (empty where it cannot run the setting); every row has every column
    if awk -F, 'NR == 1 { ok = $11 == "memory_gb" && $15 == "sim_memory_gb"; next }
                NF != 15 || ($11 == "" && $15 != "") { ok = 0; print } END { exit !ok }' \
           "$TMP/rows-$size.csv" >"$TMP/bad-rows"
    then pass; else fail "$size: CSV memory columns: $(head -1 "$TMP/rows-$size.csv"; head -3 "$TMP/bad-rows")"; fi
    key e C-u
    key -l "$TMP/rows-$size.csv"
    key Enter
    expect "the file exists: overwrite it?"
    shot "overwrite prompt"
    key n
    expect "kept: nothing written"
    if head -1 "$TMP/rows-$size.csv" | grep -q "^row,id"; then pass; else fail "$size: n overwrote the file"; fi
    key e C-u
    key -l "$TMP/rows-$size.csv"
    key Enter
    expect "overwrite it?"
    key y
    expect "predictions written to"
    # the export's dataset size is the CLI's, exactly
    if grep -q '"dataset_size": 1281167,' "$TMP/rows-$size.csv"; then pass
    else fail "$size: export dataset_size: $(grep -o '"dataset_size": [^,]*' "$TMP/rows-$size.csv")"; fi
    # the dataset prompt reads what the screen shows (1.28M)
    key 1 d C-u 1.2M Enter
    expect "dataset: 1200000 samples per epoch"
    key d C-u 1281167 Enter
    expect "dataset: 1281167 samples per epoch"
    # one batch limit, the same as zoo build's
    key b C-u 1048577 Enter
    expect "batch size must be in [1, 1048576]"
    shot "batch limit"
    # a setting without its own inspector: the message names two ids
    key w
    expect_re "V100-P1w3ho-PCIe: no inspector; V100-P[0-9]+w[0-9]+h[oe]-[A-Za-z0-9]+'s"
    shot "extrapolated"
    key W
    # sync and framework: all-reduce, PyTorch
    key a
    expect_re "all-reduce| AR "
    key F
    expect_re "PyTorch| PT "
    shot "all-reduce, PyTorch"
    key a F
    expect_re "PS 1|P1 "
    # groups: a search, its long names elided in the middle, scrolled sideways; Esc clears it
    key / BatchNorm Enter
    expect "Ops matching /BatchNorm"
    shot "groups search"
    key Right
    expect "‹"
    key Escape
    expect "groups of"
    if grep -q "matching /BatchNorm" "$TMP/screen"; then fail "$size: Esc left the search"; else pass; fi
    shot "groups"
    # importance: a group's ops, told apart; zoomed in; the legend (the graph drawn on the
    # canvas is not text: canvas_off leaves the header, the list and the bars)
    key i
    expect_re "importance: [a-z_.]+ = [0-9.e+-]+" 30
    expect "legend"
    settle; canvas_off; no_cut "$size: importance"
    key j j
    # (PgDn past the group's op types: how many it has depends on which group the inspector
    # ranks second; an 80x24 pane pages three lines at a time)
    k=0; while [ $k -lt 20 ] && ! wait_for "ops (share of group)" 1; do key NPage; k=$((k + 1)); done
    expect "ops (share of group)"
    canvas_off
    sed -n '/ops (share of group)/,$p' "$TMP/screen" | grep -E '^ +[0-9.]+% ' | sort | uniq -d >"$TMP/dup"
    if [ -s "$TMP/dup" ]; then fail "$size: op lines alike: $(cat "$TMP/dup")"; else pass; fi
    no_cut "$size: importance, a group's ops"
    key z z
    expect "zoom 2.2x"
    settle; boxes_apart "$size: importance at zoom 2.2x"
    canvas_off; no_cut "$size: importance at zoom 2.2x"
    key 0
    # scaling: bars, the out-of-memory batch marked, the largest batch that fits stated
    key 5
    expect "throughput (samples/s) vs workers"
    expect "largest batch that fits:" 60
    shot "scaling"
    contains "$TMP/screen" "X"
    # the help: every page, nothing cut, then closed
    key '?'
    expect "Help (Esc or ? closes"
    shot "help, first page"
    i=0; while [ $i -lt 8 ]; do key PageDown; sleep 0.2; settle; no_cut "$size: help page $((i + 2))"; i=$((i + 1)); done
    key End
    expect "mem-ctrl"
    shot "help, last page"
    key Escape
    expect "Scaling"
    # prompts at their longest
    key 1 '$'
    expect "per GPU-hour for every GPU"
    shot "price prompt"
    key C-u 2.5 Enter
    expect "price: \$2.50 per GPU-hour for every GPU"
    key '$' C-u Enter
    expect "each GPU's catalog price"
    quit_ok
done

# a catalog whose V100-PCIe-16GB (the first setting's GPU) has no FP32 figure: the simulator
# cannot time it, and the predict tab says why, whole
mkdir -p "$TMP/assets"
sed '/"name": "V100-PCIe-16GB"/,/"fp32_tflops"/ s/"fp32_tflops": [0-9.]*/"fp32_tflops": null/' \
    assets/gpus.json >"$TMP/assets/gpus.json"
for size in 80x24 200x50; do
    TUI_COLS=${size%x*}; TUI_ROWS=${size#*x}
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_ASSETS='$TMP/assets'" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
    expect "no simulation:" 30
    expect_re "cannot simulate +it"
    shot "no simulation"
    quit_ok
    # LANG=C: the iteration strips in ASCII levels, not one '#' for every height
    start "NO_COLOR=1 LANG=C LC_ALL=C" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
    expect "+ Prediction: 12 metrics" 30
    settle
    levels=$(sed -n '/One iteration/,$p' "$TMP/screen" | grep -o '[_.,=+*#-]' | sort -u | wc -l)
    if [ "$levels" -ge 3 ]; then pass; else fail "$size LANG=C: the strips have $levels levels"; cat "$TMP/screen" >&2; fi
    no_cut "$size LANG=C"
    quit_ok
    # the command line opens the explorer at a cluster: by id, or by the cluster options
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8" "'$BIN' explore '$GRAPH' --settings '$SETTINGS' --setting A100-80GB-SXM-P2w4ho-10GbE-mixed"
    expect "A100-80GB-SXM" 30
    expect_re "P(S )?2 +homo +w(orkers )?4 +10GbE +mixed"
    shot "a setting from the command line"
    quit_ok
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8" "'$BIN' explore '$GRAPH' --settings '$SETTINGS' --gpu H100-SXM --workers 8 --sync allreduce --network NVLink --framework pytorch"
    expect "H100-SXM" 30
    expect_re "(all-reduce|AR) +w(orkers )?8 +NVLink +fp32 +(PyTorch|PT)"
    shot "all-reduce from the command line"
    quit_ok
done
# the setting-aware inspector (a small one trained here, as e2e_sa.sh does, shipped through
# DRIPLE_ASSETS): the header names it, the predicted numbers carry their 80% interval (in
# compare too), and a graph unlike its training graphs is marked OUT OF DISTRIBUTION; one
# fine-tuned for a setting is named so
SA="$TMP/sa-assets/inspectors"
mkdir -p "$SA"
ok "$DRIPLE" dataset sweep --out "$TMP/sw.json" --models alexnet,squeezenet --zoo-batches 1 \
    --generated 2 --gen-batches 1 --random 2 --max-workers 4 --settings assets/settings/default.json --quota 1
ok "$DRIPLE" dataset extract "$TMP/sw.json" --setting V100-P1w2ho-PCIe -o "$TMP/base_ds.json"
ok "$DRIPLE" train --dataset "$TMP/base_ds.json" -o "$SA/base.json" --epochs 1 --hidden 8
ok "$DRIPLE" train --sweep "$TMP/sw.json" --body "$SA/base.json" -o "$SA/setting-aware.json" \
    --members 1 --hidden1 8 --hidden2 8 --epochs 1
for size in 80x24 200x50; do
    TUI_COLS=${size%x*}; TUI_ROWS=${size#*x}
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_ASSETS='$TMP/sa-assets' DRIPLE_INSPECTORS='$TMP/none'" "'$BIN' explore '$GRAPH' --settings '$SETTINGS'"
    expect "setting-aware" 30
    expect "80% interval"
    shot "setting-aware"
    if wait_re '±' 15 6; then pass; else fail "$size: setting-aware: too few intervals"; cat "$TMP/screen" >&2; fi
    key 2
    expect "Compare every GPU"
    expect_re " SA +[0-9.]+±"
    shot "compare, setting-aware"
    if [ "$size" = 200x50 ]; then
        # importance under the setting-aware inspector: through it (occlusion), the value the
        # Predict tab shows, the inspector named in full (issue 30)
        key 4
        expect "by setting-aware inspector $TMP/sa-assets/inspectors/setting-aware.json" 30
        expect_re "importance: gpu_util.active = [0-9.e+]+ ms  \(occlusion"
        if grep -q "no inspector" "$TMP/screen"; then fail "importance: no inspector"; else pass; fi
    fi
    quit_ok
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_ASSETS='$TMP/sa-assets' DRIPLE_INSPECTORS='$TMP/none'" "'$BIN' explore tests/data/graph/small.json --settings '$SETTINGS'"
    expect "OUT OF DISTRIBUTION" 30
    shot "out of distribution"
    quit_ok
done
# fine-tuned for one setting (driple transfer --from the setting-aware file): the header says so
ok "$DRIPLE" transfer --from "$SA/setting-aware.json" --dataset "$TMP/base_ds.json" \
    -o "$TMP/tuned.json" --epochs 3
for size in 80x24 200x50; do
    TUI_COLS=${size%x*}; TUI_ROWS=${size#*x}
    start "LANG=C.UTF-8 LC_ALL=C.UTF-8 DRIPLE_INSPECTORS='$TMP/none'" "'$BIN' explore '$GRAPH' --settings '$SETTINGS' --setting-aware '$TMP/tuned.json'"
    expect "setting-aware (fine-tuned)" 30
    expect "80% interval"
    shot "setting-aware, fine-tuned"
    quit_ok
done
fails 1 "no setting 'NOPE-X'" "$DRIPLE" explore "$GRAPH" --setting NOPE-X --bench-keys 1
fails 2 "not both" "$DRIPLE" explore "$GRAPH" --setting V100-P1w2ho-PCIe --gpu T4 --bench-keys 1

# every id shown anywhere above is accepted back by --setting and names one setting: predict
# takes it and names the setting it read by the same id (with its inspector, or saying it
# has none)
sort -u "$TMP/ids" >"$TMP/ids.u"
n=$(wc -l <"$TMP/ids.u")
if [ "$n" -ge 10 ]; then pass; else fail "only $n ids seen on the screens"; fi
while read -r id; do
    env DRIPLE_INSPECTORS="$TMP/none" "$DRIPLE" predict tests/data/graph/small.json --settings "$SETTINGS" \
        --setting "$id" --json >"$TMP/p" 2>"$TMP/err"
    if grep -qF "\"setting\": \"$id\"" "$TMP/p" || grep -qF "setting '$id' (GPU " "$TMP/err"; then pass
    else fail "id '$id' shown on screen: --setting gives: $(head -c 300 "$TMP/err") $(grep -o '"setting": "[^"]*"' "$TMP/p")"; fi
done <"$TMP/ids.u"
finish
