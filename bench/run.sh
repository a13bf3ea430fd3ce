#!/bin/sh
# bench/run.sh: `make bench`: times the inspector network (one prediction with the published GCN
# on 1 and 2 threads, a batch of predictions in one call, random GIN, GAT and MPNN inspectors, a
# 32-graph training step with the paper's recipe and with the shipped one, a transfer head step
# and the embedding pass) beside an independent PyTorch implementation of the same model
# (bench/torch_ref.py, run with /usr/bin/python3 when it has torch; skipped, and said so,
# otherwise) in the same run, then compare over the shipped settings and over every GPU x sync x
# network (--grid, from the cached embedding), dataset build throughput,
# coarsening, explanation, the explorer, ONNX imports and `driple calibrate`. Every figure is a
# median over repeated runs; the machine, the load average and the thread counts are printed.
# The dense products' backends (issue 33) come first: five workloads under DRIPLE_KERNELS=own,
# openblas and auto, on 1 and 2 threads (`sh bench/run.sh BIN kernels` runs that section alone).
# Usage: sh bench/run.sh [path/to/driple [kernels]]
BIN=${1:-build/driple}
ONLY=${2:-}
REF=${REF_DIR:-../shared/reference}
PY=${PYTHON:-/usr/bin/python3}
[ -x "$BIN" ] || { echo "bench: $BIN not built (run make)" >&2; exit 1; }

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "machine: $(nproc) core(s), ${cpu:-unknown CPU}, $(uname -sm); kernels: $("$BIN" bench predict --random --synthetic 2 --runs 1 --json | sed -n 's/.*"kernels": *"\([a-z0-9]*\)".*/\1/p')"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC'); load average: $(load)"
if [ -f "$REF/gcn_pretrained_weights.json" ]; then
    model="--weights $REF/gcn_pretrained_weights.json"
    graph="--grouped $REF/cases/gcn/sparse100.grouped.json"
    echo "model:   published GCN weights ($REF), graph: reference case sparse100 (100 groups)"
else
    model="--random"
    graph="--synthetic 100"
    echo "model:   published GCN architecture, random weights (reference data not found); synthetic 100-group graph"
fi
echo

# a field of a --json line
field() { grep -o "\"$1\": *[0-9.eE+-]*" | head -n 1 | sed 's/.*: *//'; }

# ---- the dense products' backends: own kernels, OpenBLAS, auto ----
# Each workload's median under each backend and thread count; auto against the faster of the
# two (target: within 5%), and the best backend against the own kernels on 2 threads for the
# training step and the embedding of 1,000 graphs (target: 1.3x).
kmed() { # backend threads command...: the median (ms) of the command's --json line
    be=$1; t=$2; shift 2
    o=$(DRIPLE_KERNELS=$be "$@" --threads "$t" --json 2>&1) || { echo "FAILED"; return; }
    printf '%s\n' "$o" | field median_ms
}
kernels_section() {
    echo "products: $("$BIN" --version | sed -n 's/^kernels: //p')"
    ct="OPENBLAS_CORETYPE not set"; [ -n "${OPENBLAS_CORETYPE:-}" ] && ct="OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE (set)"
    echo "openblas: $("$BIN" --version | sed -n 's/^openblas: //p'); $ct"
    "$BIN" --version | sed -n 's/^note: /note:     /p'
    echo "table:    $("$BIN" --version | sed -n "s/^auto's table: //p")"
    printf '%-44s %4s %10s %10s %10s %7s\n' "workload (median ms)" "thr" "own" "openblas" "auto" "auto/best"
    kstatus=0
    while IFS='|' read -r name cmd; do
        [ -n "$name" ] || continue
        for t in 1 2; do
            o=$(eval kmed own $t $cmd); b=$(eval kmed openblas $t $cmd); a=$(eval kmed auto $t $cmd)
            r=$(awk -v o="$o" -v b="$b" -v a="$a" 'BEGIN{m = o < b ? o : b; if (m > 0 && a > 0) printf "%.3f", a / m; else printf "?"}')
            flag=""; awk -v r="$r" 'BEGIN{exit !(r > 1.05)}' && flag=" > 1.05" && kstatus=1
            printf '%-44s %4s %10s %10s %10s %7s%s  [load %s]\n' "$name" "$t" "$o" "$b" "$a" "$r" "$flag" "$(load)"
            case "$name" in train*|embed*)
                [ $t = 2 ] && echo "$name: best backend vs own on 2 threads: $(awk -v o="$o" -v b="$b" -v a="$a" 'BEGIN{m = b < a ? b : a; if (m > 0) printf "%.2fx", o / m; else printf "?"}') (target 1.3x)" >>"$ktmp" ;;
            esac
        done
    done <<EOW
predict, published GCN, 100 groups|"$BIN" bench predict $model $graph --runs 200
train step, 32 graphs, paper|"$BIN" bench train $model $graph --runs 5
setting-aware heads: compare --grid|"$BIN" bench compare samples/graphs/resnet50.json --grid --runs 20
embed 1,000 graphs (100 groups each)|"$BIN" bench embed $model $graph --batch 1000 --runs 3
predict, 1,000 groups (large graph, --groups 1000)|"$BIN" bench predict $model --synthetic 1000 --runs 3
EOW
    cat "$ktmp"
    [ $kstatus = 0 ] && echo "auto within 5% of the faster backend on every workload" ||
        echo "auto: more than 5% behind the faster backend where marked (noise on a loaded machine, or the table)"
}
ktmp=$(mktemp)
kernels_section
rm -f "$ktmp"
echo
[ "$ONLY" = kernels ] && exit 0

status=0
last=""
target="" # set before run: the issue's target, printed beside the figure
run() { # label, command...: prints the median (and CPU time), keeps the median in $last
    label=$1; shift
    last=""
    out=$("$@" --json 2>&1) || { echo "$label: FAILED: $out"; status=1; return; }
    med=$(printf '%s\n' "$out" | field median_ms)
    extra=""
    emb=$(printf '%s\n' "$out" | field embed_median_ms)
    [ -n "$emb" ] && extra=" (embedding pass $emb ms per graph)"
    pg=$(printf '%s\n' "$out" | field per_graph_median_ms)
    [ -n "$pg" ] && extra=" = $pg ms per graph$extra"
    if [ -z "$med" ]; then # explain reports its own fields
        g=$(printf '%s\n' "$out" | field grad_ms); o=$(printf '%s\n' "$out" | field occlusion_ms)
        printf '%-40s gradient %s ms, occlusion %s ms\n' "$label" "$g" "$o"
        return
    fi
    # the process's CPU time (every thread) per run: a mean, as a spinning worker's time reaches
    # the process's clock only at its next tick or sleep (a median of single runs misses it)
    cpu=$(printf '%s\n' "$out" | field cpu_mean_ms)
    [ -n "$cpu" ] && extra=" (CPU $cpu ms)$extra"
    [ -n "$target" ] && extra="$extra; target $target"
    printf '%-40s median %9s ms%s  [load %s]\n' "$label" "$med" "$extra" "$(load)"
    last=$med
    target=""
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a > 0 && b > 0) printf "%.1f", a / b; else printf "?" }'; }

# ---- the inspector network: driple ----
target="<= 3.5 ms"
run "predict, 1 thread"                 "$BIN" bench predict $model $graph --threads 1 --runs 200
p1=$last
target="<= 2.2 ms"
run "predict, 2 threads"                "$BIN" bench predict $model $graph --threads 2 --runs 200
p2=$last
run "predict, 32 graphs in one call, 1 thr" "$BIN" bench predict $model $graph --threads 1 --batch 32 --runs 20
run "predict, 32 graphs in one call, 2 thr" "$BIN" bench predict $model $graph --threads 2 --batch 32 --runs 20
# the other layer types (random weights, default architecture: 64 wide, 50 layers on 100 groups)
for layer in gin gat mpnn; do
    run "predict $layer, random, 1 thread" "$BIN" bench predict --random --layer $layer $graph --threads 1 --runs 100
done
run "train step, 32 graphs, paper, 1 thr"  "$BIN" bench train $model $graph --threads 1 --runs 5
t1=$last
target="<= 120 ms"
run "train step, 32 graphs, paper, 2 thr"  "$BIN" bench train $model $graph --threads 2 --runs 5
t2=$last
run "train step, 32 graphs, driple-c, 1 thr" "$BIN" bench train --random --recipe driple-c $graph --threads 1 --runs 20
run "train step, 32 graphs, driple-c, 2 thr" "$BIN" bench train --random --recipe driple-c $graph --threads 2 --runs 20
run "transfer head step, 32 cached, 1 thr" "$BIN" bench transfer $model $graph --threads 1 --runs 200

# ---- the same model in PyTorch, in this run ----
echo
if [ ! -f "$REF/gcn_pretrained_weights.json" ]; then
    echo "PyTorch: skipped (the published weights are not in $REF)"
elif ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "PyTorch: skipped ($PY has no torch; Debian: apt-get install python3-torch)"
elif tout=$("$PY" bench/torch_ref.py --ref "$REF" 2>/dev/null); then
    printf '%s\n' "$tout" | sed -n 's/.*"check".*"worst_rel_err": *\([0-9.eE+-]*\).*"torch": *"\([^"]*\)".*/PyTorch \2 (bench\/torch_ref.py): outputs match the reference cases (worst relative error \1)/p'
    best_p=""; best_t=""
    for line in $(printf '%s\n' "$tout" | grep '"what"' | sed 's/ //g'); do
        what=$(printf '%s' "$line" | sed 's/.*"what":"\([a-z_]*\)".*/\1/')
        thr=$(printf '%s' "$line" | field threads)
        med=$(printf '%s' "$line" | field median_ms)
        case $what in
            predict) name="eager" ;; predict_jit) name="torch.jit.trace" ;; train) name="eager, Adam" ;;
        esac
        kind=predict; [ "$what" = train ] && kind="train step, 32 graphs, paper"
        printf '%-40s median %9s ms  [load %s]\n' "PyTorch $kind, $name, $thr thr" "$med" "$(load)"
        if [ "$what" = train ]; then
            [ -z "$best_t" ] || awk -v a="$med" -v b="$best_t" 'BEGIN{exit !(a < b)}' && best_t=$med
        else
            [ -z "$best_p" ] || awk -v a="$med" -v b="$best_p" 'BEGIN{exit !(a < b)}' && best_p=$med
        fi
    done
    echo "best PyTorch prediction $best_p ms: driple $(ratio "$best_p" "$p1")x faster on 1 thread, $(ratio "$best_p" "$p2")x on 2 (target >= 5x)"
    echo "best PyTorch training step $best_t ms: driple $(ratio "$best_t" "$t1")x faster on 1 thread, $(ratio "$best_t" "$t2")x on 2"
else
    echo "PyTorch: FAILED: $(printf '%s' "$tout" | tail -n 3)"; status=1
fi
echo

# ---- compare and dataset build ----
# every shipped setting for one graph: one GNN pass per distinct inspector body, then heads
if o=$("$BIN" compare samples/graphs/resnet50.json --json 2>/dev/null); then
    printf '%-40s %s ms for %s settings, %s GNN passes  [load %s]\n' "compare (resnet50, shipped settings)" \
        "$(printf '%s\n' "$o" | field ms)" "$(printf '%s\n' "$o" | field n_predicted)" \
        "$(printf '%s\n' "$o" | field gnn_passes)" "$(load)"
else
    echo "compare: FAILED"; status=1
fi
# every catalog GPU x sync x network for one graph, from the cached embedding (the embedding
# pass is timed apart: the first call)
if o=$("$BIN" bench compare samples/graphs/resnet50.json --grid --runs 20 --json 2>&1); then
    printf '%-40s median %9s ms (CPU %s ms) for %s settings (%s predicted; embedding pass in the first call %s ms); target <= 20 ms  [load %s]\n' \
        "compare --grid (resnet50, cached emb.)" "$(printf '%s\n' "$o" | field median_ms)" \
        "$(printf '%s\n' "$o" | field cpu_median_ms)" "$(printf '%s\n' "$o" | field settings)" \
        "$(printf '%s\n' "$o" | field n_predicted)" "$(printf '%s\n' "$o" | field first_ms)" "$(load)"
else
    echo "compare --grid: FAILED: $o"; status=1
fi
tmp=$(mktemp -d)
for j in 1 2; do
    if o=$("$BIN" dataset build --setting V100-P1w2ho-PCIe --out "$tmp/ds$j" --graphs 300 --jobs $j --json 2>/dev/null); then
        printf '%-40s %s jobs/s (%s jobs: build and simulate %s s)  [load %s]\n' "dataset build, 1 setting, $j thr" \
            "$(printf '%s\n' "$o" | field jobs_per_s)" "$(printf '%s\n' "$o" | field jobs)" \
            "$(printf '%s\n' "$o" | field build)" "$(load)"
    else
        echo "dataset build: FAILED"; status=1
    fi
done
rm -rf "$tmp"
run "coarsen (synthetic graph)"    "$BIN" bench coarsen
run "explain"                      "$BIN" bench explain
run "explorer: key + full redraw"  "$BIN" explore samples/graphs/resnet50.json --bench-keys 200
# the Compare tab over every catalog GPU: each GPU, worker or precision key repredicts every row
# (one batched head) and redraws (issue 12: key to frame <= 50 ms)
run "explorer: Compare tab, key + redraw" "$BIN" explore samples/graphs/resnet50.json --bench-keys 100 --bench-seq 2gwGWm
# the importance tab's background work: key to frame, then when the result is on screen
if o=$("$BIN" explore samples/graphs/resnet50.json --bench-keys 1 --json 2>&1); then
    for what in importance occlusion; do
        k=importance_open_ms; [ $what = occlusion ] && k=occlusion_key_ms
        printf '%-34s key to frame %s ms, shown after %s ms\n' "explorer: $what (background)" \
            "$(printf '%s\n' "$o" | field $k)" "$(printf '%s\n' "$o" | field ${what}_ready_ms)"
    done
else
    echo "explorer: importance: FAILED: $o"; status=1
fi
# importing real exports (issue 13): each ONNX corpus model, then a 350 MB ViT-B/16 export made
# at bench time from the stripped corpus file, its weights written inline as zeros
# (tools/onnx_inflate.c); `graph info` is timed (reading, shape inference, training expansion)
ms_of() { s=$(date +%s%N); "$@" >/dev/null 2>&1 || return 1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
worst=0; worst_name=""; count=0
for f in tests/data/onnx/corpus/*.onnx; do
    [ -f "$f" ] || continue
    t=$(ms_of "$BIN" graph info "$f") || { echo "import $f: FAILED"; status=1; continue; }
    count=$((count + 1))
    [ "$t" -gt "$worst" ] && worst=$t && worst_name=$(basename "$f")
done
printf '%-34s %d models, slowest %s ms (%s)\n' "import ONNX corpus (graph info)" "$count" "$worst" "$worst_name"
tmp=$(mktemp -d)
if cc -O2 -std=c11 -o "$tmp/inflate" tools/onnx_inflate.c 2>/dev/null &&
   "$tmp/inflate" tests/data/onnx/corpus/vit_b_16.onnx "$tmp/vit_b_16_inline.onnx"; then
    size=$(( $(wc -c <"$tmp/vit_b_16_inline.onnx") / 1000000 ))
    best=""
    for i in 1 2 3; do
        t=$(ms_of "$BIN" graph info "$tmp/vit_b_16_inline.onnx") || { echo "import ViT-B/16 inline: FAILED"; status=1; break; }
        [ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
    done
    printf '%-34s best of 3 %s ms (%s MB, weights inline; target < 1000 ms)\n' \
        "import ViT-B/16 (inflated)" "$best" "$size"
else
    echo "import ViT-B/16 (inflated): skipped (no C compiler to build tools/onnx_inflate.c)"
fi
rm -rf "$tmp"
# the simulator against every published row, leave-one-GPU-out included (issue 11: < 30 s)
if [ -r ../shared/calibration/throughput_published.csv ]; then
    timer=""; [ -x /usr/bin/time ] && timer="/usr/bin/time -f %U+%S"
    t0=$(date +%s%N)
    if o=$( { $timer "$BIN" calibrate --json >/dev/null; } 2>&1 ); then
        t1=$(date +%s%N)
        cpu=""; [ -n "$timer" ] && cpu=" (CPU $(printf '%s\n' "$o" | tail -n 1 | awk -F+ '{printf "%.1f", $1 + $2}') s)"
        printf '%-34s %s s%s\n' "calibrate: 834 rows + LOGO (2 thr)" \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", (b-a)/1e9}')" "$cpu"
    else
        echo "calibrate: FAILED: $o"; status=1
    fi
fi
echo
echo "targets: predict <= 3.5 ms on 1 thread, <= 2.2 ms on 2 and >= 5x the best PyTorch variant; a"
echo "         32-graph training step (paper) <= 120 ms on 2 threads; compare --grid from the cached"
echo "         embedding <= 20 ms (issue 18); explorer redraw < 50 ms; calibrate over every published"
echo "         row < 30 s (issue 11)"
echo "note: the machine is shared; a load average above the core count inflates every wall-clock"
echo "      median (CPU is the process's CPU time per run, all its threads, a mean over the runs)."
exit $status
