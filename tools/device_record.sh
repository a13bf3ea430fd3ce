#!/bin/sh
# The GPU-machine checks of `driple record` (notes/record.md, "What remains on a GPU machine"), in
# one prepared script so that a session lent a GPU spends its few device minutes on one call.
#
#   tools/device_record.sh bundle
#       here, after `make`: copies build/driple and the shared libraries it links that a bare GPU
#       machine may lack (cJSON, Graphviz, ncurses) into build/device/; carry that folder.
#       ($BUILD names another build folder, as for make.)
#   tools/device_record.sh run OUTDIR [SECONDS]
#       on the GPU machine: a smoke test against the real driver (driple record beside nvidia-smi,
#       an out-of-range --gpu), then a recorded PyTorch ResNet-50 training run (batch 32, SGD,
#       synthetic data, SECONDS long, default 60), each file named by machine and command.
#   tools/device_record.sh compare PREFIX GPU BATCH
#       anywhere: the labels of PREFIX.gpu.csv (+ PREFIX.net.csv) next to `driple simulate` for
#       ResNet-50 on GPU at BATCH, as a Markdown table for README.
set -eu
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
bundle_dir=$build/device

die() { echo "device_record: $*" >&2; exit 1; }

# the bundle (a GPU machine has only it), unless the build beside it is newer: a bundle left by
# an older build would run old code
driple_bin() {
    if [ -x "$bundle_dir/bin/driple" ] && [ ! "$build/driple" -nt "$bundle_dir/bin/driple" ]; then
        LD_LIBRARY_PATH=$bundle_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export LD_LIBRARY_PATH
        echo "$bundle_dir/bin/driple"
    elif [ -x "$build/driple" ]; then
        echo "$build/driple"
    else
        die "no driple binary: run 'make' (and '$0 bundle' for a GPU machine)"
    fi
}

cmd_bundle() {
    [ -x "$build/driple" ] || die "$build/driple missing: run 'make' first"
    rm -rf "$bundle_dir"
    mkdir -p "$bundle_dir/bin" "$bundle_dir/lib"
    cp "$build/driple" "$bundle_dir/bin/"
    # glibc's own libraries stay behind: the GPU machine has its own, matching its loader.
    ldd "$build/driple" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
        grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
        while read -r lib; do cp -L "$lib" "$bundle_dir/lib/"; done
    du -sh "$bundle_dir" | awk '{ print "bundled " $2 " (" $1 "): carry it to the GPU machine" }'
}

# ResNet-50 training on synthetic data; prints the median step time once done.
train_py='
import os, statistics, sys, time, torch, torchvision
batch, seconds = int(sys.argv[1]), float(sys.argv[2])
dev = torch.device("cuda")
model = torchvision.models.resnet50().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(batch, 3, 224, 224, device=dev)
y = torch.randint(0, 1000, (batch,), device=dev)
loss_fn = torch.nn.CrossEntropyLoss()
steps, t_end = [], time.time() + seconds
while time.time() < t_end:
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss_fn(model(x), y).backward()
    opt.step()
    torch.cuda.synchronize()
    steps.append((time.perf_counter() - t0) * 1e3)
warm = steps[5:] or steps
print("steps %d, median step %.2f ms (first 5 left out as warm-up)" % (len(steps), statistics.median(warm)))
'

cmd_run() {
    [ $# -ge 1 ] || die "usage: $0 run OUTDIR [SECONDS]"
    out=$1 secs=${2:-60}
    mkdir -p "$out"
    driple=$(driple_bin)
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1 |
          sed 's/NVIDIA //; s/[^A-Za-z0-9]\{1,\}/-/g; s/-$//') || true
    [ -n "$gpu" ] || die "nvidia-smi finds no GPU here"
    tag=measured-$gpu-resnet50-bs32
    {
        echo "host: $(uname -n) ($(uname -sr)), $(nproc) CPUs"
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader -i 0
        python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "torchvision", torchvision.__version__)'
        echo "command: driple record --interval 100 --duration $((secs + 30)) -o $tag -- python3 -c <ResNet-50 SGD, batch 32, synthetic 224x224, ${secs} s; tools/device_record.sh>"
        date -u '+recorded: %Y-%m-%d %H:%M UTC'
    } >"$out/$tag.txt" 2>&1

    # 1. Smoke test: driple's rows beside nvidia-smi's own, same syntax, same 100 ms grid.
    nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used \
        --format=csv -lms 100 -i 0 >"$out/smoke.nvidia-smi.csv" 2>&1 &
    smi=$!
    "$driple" record --interval 100 -o "$out/smoke" -- sleep 3 >"$out/smoke.labels.txt" 2>&1 ||
        echo "smoke: driple record failed (exit $?)" >>"$out/smoke.labels.txt"
    kill "$smi" 2>/dev/null || true
    if "$driple" record --gpu 99 --duration 1 -o "$out/gpu99" >"$out/gpu99.txt" 2>&1; then
        echo "FAIL: --gpu 99 was accepted" >>"$out/gpu99.txt"
    fi

    # 2. The recorded training run (30 s margin for CUDA start-up and model build).
    "$driple" record --interval 100 --duration $((secs + 30)) -o "$out/$tag" -- \
        python3 -c "$train_py" 32 "$secs" >"$out/$tag.labels.txt" 2>&1 ||
        echo "record exited $?" >>"$out/$tag.labels.txt"
    cat "$out/$tag.txt" "$out/smoke.labels.txt" "$out/gpu99.txt" "$out/$tag.labels.txt"
}

# Prints "resource idle active peak" lines from driple's label table on stdin.
label_rows() { awk '$1 ~ /^(gpu_mem_util|gpu_util|net_rx|net_tx)$/ { print $1, $2, $3, $4 }'; }

cmd_compare() {
    [ $# -eq 3 ] || die "usage: $0 compare PREFIX GPU BATCH"
    prefix=$1 gpu=$2 batch=$3
    driple=$(driple_bin)
    [ -f "$prefix.gpu.csv" ] || die "$prefix.gpu.csv: no such file"
    net=
    [ -f "$prefix.net.csv" ] && net="--net $prefix.net.csv"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # shellcheck disable=SC2086 # $net is empty or two words
    "$driple" trace extract "$prefix.gpu.csv" $net | label_rows >"$tmp/measured"
    "$driple" simulate zoo:resnet50 --gpu "$gpu" --ps 1 --workers 1 --network PCIe \
        --batch "$batch" >"$tmp/sim.txt"
    label_rows <"$tmp/sim.txt" >"$tmp/simulated"
    echo "| label | recorded ($prefix) | simulated (driple simulate, $gpu, batch $batch) |"
    echo "|---|---|---|"
    join "$tmp/measured" "$tmp/simulated" | awk '{
        printf "| %s.idle (ms) | %s | %s |\n", $1, $2, $5
        printf "| %s.active (ms) | %s | %s |\n", $1, $3, $6
        printf "| %s.peak | %s | %s |\n", $1, $4, $7 }'
    awk '$1 == "iteration" { print "| simulated iteration (ms) | | " $2 " |" }' "$tmp/sim.txt"
}

[ $# -ge 1 ] || die "usage: $0 bundle | run OUTDIR [SECONDS] | compare PREFIX GPU BATCH"
verb=$1
shift
case $verb in
    bundle)  cmd_bundle ;;
    run)     cmd_run "$@" ;;
    compare) cmd_compare "$@" ;;
    *)       die "unknown verb '$verb' (bundle, run, compare)" ;;
esac
