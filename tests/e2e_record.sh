#!/bin/sh
# e2e_record.sh: `driple record` and `driple dataset add` without a GPU: the fake NVML library
# (build/tests/libfake_nvml.so, through DRIPLE_NVML_LIB) writes known GPU rows, a fixture stands
# in for /proc/net/dev where the interface matters, Ctrl-C leaves whole files, bad input fails.
. tests/lib.sh
FAKE=${BUILD:-build}/tests/libfake_nvml.so
D=tests/data/record
if [ ! -f "$FAKE" ]; then
    echo "e2e_record.sh: $FAKE missing (make ${BUILD:-build}/tests/libfake_nvml.so)" >&2
    fail "fake NVML library not built"
    finish; exit 1
fi

# A file is whole: a header, every line ended, at least two rows.
whole() {
    if [ "$(head -n 1 "$1")" = "$2" ] && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] \
        && [ "$(wc -l <"$1")" -ge 3 ]; then pass; else fail "$1 is not whole: $(tail -c 200 "$1")"; fi
}
GPU_HDR='timestamp, utilization.gpu [%], utilization.memory [%], memory.used [MiB]'
NET_HDR='timestamp,rx_bytes,tx_bytes'

# --- scripted GPU rows through the fake NVML: known peaks, labels as `trace extract` gives them
SCRIPT='0,0,512;80,40,2048;80,40,2048;80,40,2048;0,0,512;0,0,512'
ok env DRIPLE_NVML_LIB=$FAKE FAKE_NVML_SCRIPT=$SCRIPT "$DRIPLE" record --interval 20 --iface lo \
    -o "$TMP/s" --json -- sleep 0.6
cp "$TMP/out" "$TMP/rec.json"
contains "$TMP/err" "GPU 0 (Fake GPU 80GB) -> $TMP/s.gpu.csv"
contains "$TMP/err" "network lo -> $TMP/s.net.csv"
whole "$TMP/s.gpu.csv" "$GPU_HDR"
whole "$TMP/s.net.csv" "$NET_HDR"
contains "$TMP/s.gpu.csv" ", 80 %, 40 %, 2048 MiB"
contains "$TMP/s.gpu.csv" ", 0 %, 0 %, 512 MiB"
# Every GPU row has nvidia-smi's shape.
if grep -vqE '^(timestamp, |[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}, [0-9]+ %, [0-9]+ %, [0-9]+ MiB$)' "$TMP/s.gpu.csv"
then fail "a GPU row is not in nvidia-smi's syntax"; else pass; fi
# The labels printed are exactly `driple trace extract`'s on the same files.
ok "$DRIPLE" trace extract "$TMP/s.gpu.csv" --net "$TMP/s.net.csv" --json
if cmp -s "$TMP/out" "$TMP/rec.json"; then pass; else fail "record's labels differ from trace extract's"; fi
# Peaks are exact: 80 % GPU, 40 % memory controller.
if tr -d ' \n' <"$TMP/rec.json" | grep -qE '"gpu_util":\{[^}]*"peak":80(\.0*)?[,}]'; then pass
else fail "gpu_util peak is not 80: $(cat "$TMP/rec.json")"; fi
if tr -d ' \n' <"$TMP/rec.json" | grep -qE '"gpu_mem_util":\{[^}]*"peak":40(\.0*)?[,}]'; then pass
else fail "gpu_mem_util peak is not 40: $(cat "$TMP/rec.json")"; fi

# --- the busiest interface by default (a fixture stands in for /proc/net/dev)
ok env DRIPLE_PROC_NET_DEV=$D/net_dev.txt "$DRIPLE" record --no-gpu --interval 20 -o "$TMP/b" -- sleep 0.2
contains "$TMP/err" "network ens5 -> $TMP/b.net.csv"
contains "$TMP/err" "no GPU (--no-gpu)"
contains "$TMP/b.net.csv" ",123456789012,23456789012"
[ -e "$TMP/b.gpu.csv" ] && fail "--no-gpu wrote a GPU trace" || pass

# --- without a command: the machine as it is, for --duration
ok "$DRIPLE" record --no-gpu --iface lo --interval 20 --duration 0.3 -o "$TMP/d"
# -o DIR/: the default name inside the directory, not a hidden DIR/.net.csv.
mkdir -p "$TMP/runs"
ok "$DRIPLE" record --no-gpu --iface lo --interval 20 --duration 0.1 -o "$TMP/runs/"
[ ! -e "$TMP/runs/.net.csv" ] && ls "$TMP"/runs/driple-record-*.net.csv >/dev/null 2>&1 && pass ||
    fail "-o DIR/ wrote $(ls -a "$TMP/runs" | tr '\n' ' ')"
whole "$TMP/d.net.csv" "$NET_HDR"

# --- Ctrl-C (SIGINT to driple): the command ends, both files are whole and readable
DRIPLE_NVML_LIB=$FAKE "$DRIPLE" record --interval 20 --iface lo -o "$TMP/c" -- sleep 37.25 \
    >"$TMP/c.out" 2>"$TMP/c.err" &
pid=$!
# Wait (at most 10 s) until the command runs (driple's handler is in place by then; the traces
# take their names only when the recording ends), then a few samples more.
i=0
while [ $i -lt 100 ] && ! for p in /proc/[0-9]*; do { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null; echo; done |
    grep -q '^sleep 37\.25 '; do
    sleep 0.1; i=$((i + 1))
done
[ -e "$TMP/c.net.csv" ] && fail "the net trace has its name before the recording ends" || pass
sleep 0.3
kill -INT $pid
wait $pid; rc=$?
[ $rc -eq 130 ] && pass || fail "Ctrl-C: exit $rc, expected 130 :: $(cat "$TMP/c.err")"
contains "$TMP/c.err" "stopped by a signal"
whole "$TMP/c.gpu.csv" "$GPU_HDR"
whole "$TMP/c.net.csv" "$NET_HDR"
ok "$DRIPLE" trace extract "$TMP/c.gpu.csv" --net "$TMP/c.net.csv" --json
if for p in /proc/[0-9]*; do { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null; echo; done |
    grep -q '^sleep 37\.25 '; then fail "the command survived Ctrl-C"; else pass; fi

# --- the command's own failure is reported (exit 1), the traces still written
fails 1 "the command exited with status 3" "$DRIPLE" record --no-gpu --iface lo --interval 20 \
    -o "$TMP/f" -- sh -c 'sleep 0.2; exit 3'
whole "$TMP/f.net.csv" "$NET_HDR"

# --- no GPU: a clear error unless --no-gpu
fails 1 "no NVIDIA GPU/driver found" \
    env DRIPLE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$DRIPLE" record -o "$TMP/n" -- true
contains "$TMP/err" "--no-gpu"
fails 1 "--gpu 7: no such GPU" env DRIPLE_NVML_LIB=$FAKE "$DRIPLE" record --gpu 7 -o "$TMP/n" -- true

# --- bad input
fails 2 "no command given" "$DRIPLE" record --no-gpu -o "$TMP/x"
fails 2 "put the command after '--'" "$DRIPLE" record --no-gpu -o "$TMP/x" sleep 1
fails 2 "--interval '0'" "$DRIPLE" record --no-gpu --interval 0 -o "$TMP/x" -- true
fails 2 "--interval 'fast'" "$DRIPLE" record --no-gpu --interval fast -o "$TMP/x" -- true
fails 2 "--duration '-1'" "$DRIPLE" record --no-gpu --duration -1 -o "$TMP/x" -- true
fails 1 "no network interface 'nosuch0'" "$DRIPLE" record --no-gpu --iface nosuch0 -o "$TMP/x" -- true
fails 1 "'driple-no-such-cmd': cannot run" "$DRIPLE" record --no-gpu --iface lo -o "$TMP/x" -- driple-no-such-cmd
[ -e "$TMP/x.net.csv" ] && fail "a failed start left a trace" || pass
fails 2 "--threshold '2'" "$DRIPLE" record --no-gpu --threshold 2 -o "$TMP/x" -- true
ok "$DRIPLE" record --help
contains "$TMP/out" "-- COMMAND ARGS..."
ok "$DRIPLE" dataset add --help
contains "$TMP/out" "TRACE..."
fails 1 "cannot create" "$DRIPLE" record --no-gpu --iface lo -o /nonexistent-dir/x -- true

# --- dataset add: measured samples from the recorded traces
G=$D/tiny_graph.json
ok "$DRIPLE" dataset add --dataset "$TMP/ds.json" --graph $G --setting V100-P1w2ho-PCIe \
    --batch 16 "$TMP/s"
contains "$TMP/out" "sample 1 added"
contains "$TMP/ds.json" "driple-dataset/1"
contains "$TMP/ds.json" "measured"
contains "$TMP/ds.json" "host $(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)"
ok "$DRIPLE" dataset add --dataset "$TMP/ds.json" --graph $G --setting V100-P1w2ho-PCIe \
    --where "gpu03, cluster A" --when 2026-11-30T07:00:00Z "$TMP/c.gpu.csv" "$TMP/c.net.csv"
contains "$TMP/out" "sample 2 added"
contains "$TMP/ds.json" "gpu03, cluster A"
contains "$TMP/ds.json" "2026-11-30T07:00:00Z"
# Network only: the GPU labels are missing, not invented.
ok "$DRIPLE" dataset add --dataset "$TMP/ds.json" --graph $G --setting V100-P1w2ho-PCIe "$TMP/b.net.csv"
contains "$TMP/out" "gpu_util.peak        missing"
fails 1 "is for setting 'V100-P1w2ho-PCIe', not 'A100-P1w4ho-100GbE'" "$DRIPLE" dataset add \
    --dataset "$TMP/ds.json" --graph $G --setting A100-P1w4ho-100GbE "$TMP/s"
fails 1 "a second trace of" "$DRIPLE" dataset add --dataset "$TMP/ds2.json" --graph $G \
    --setting V100-P1w2ho-PCIe "$TMP/s.gpu.csv" "$TMP/c.gpu.csv"
fails 1 "$TMP/none.csv" "$DRIPLE" dataset add --dataset "$TMP/ds2.json" --graph $G \
    --setting V100-P1w2ho-PCIe "$TMP/none.csv"
fails 2 "--dataset, --graph and --setting are required" "$DRIPLE" dataset add --graph $G "$TMP/s"
fails 2 "no TRACE given" "$DRIPLE" dataset add --dataset "$TMP/ds2.json" --graph $G --setting X
fails 2 "--when 'yesterday'" "$DRIPLE" dataset add --dataset "$TMP/ds2.json" --graph $G \
    --setting X --when yesterday "$TMP/s"
# A sign where a digit belongs (sscanf's %2d took "-1" as an hour).
fails 2 "--when '2026-01-01T-1:00:00Z'" "$DRIPLE" dataset add --dataset "$TMP/ds2.json" \
    --graph $G --setting X --when 2026-01-01T-1:00:00Z "$TMP/s"
[ -e "$TMP/ds2.json" ] && fail "a failed add wrote a dataset" || pass
# A user's own cluster: the setting-aware inspector fine-tuned on the measured samples (a label
# the traces lack is left out), then read by predict.
if [ -f assets/inspectors/setting-aware.json ]; then
    ok "$DRIPLE" transfer --from assets/inspectors/setting-aware.json --dataset "$TMP/ds.json" \
        -o "$TMP/mine.json" --epochs 5
    contains "$TMP/out" "fine-tuned for V100-P1w2ho-PCIe on 3 measured samples"
    contains "$TMP/mine.json" '"data":"measured"'
    ok "$DRIPLE" predict $G --setting V100-P1w2ho-PCIe --batch 16 --setting-aware "$TMP/mine.json"
    contains "$TMP/out" "(fine-tuned, mixed)"
fi

# --- tools/device_record.sh, the prepared GPU-machine script: its GPU-free parts
ok sh tools/device_record.sh compare "$TMP/s" H200 32
contains "$TMP/out" "| gpu_util.peak | 80.00 |"
contains "$TMP/out" "| simulated iteration (ms) | |"
fails 1 "$TMP/none.gpu.csv: no such file" sh tools/device_record.sh compare "$TMP/none" H200 32
fails 1 "usage:" sh tools/device_record.sh compare "$TMP/s"
fails 1 "unknown verb 'fly'" sh tools/device_record.sh fly
if ! command -v nvidia-smi >/dev/null 2>&1; then
    fails 1 "nvidia-smi finds no GPU here" sh tools/device_record.sh run "$TMP/dev" 1
fi
ok sh tools/device_record.sh bundle
ok env LD_LIBRARY_PATH="${BUILD:-build}/device/lib" "${BUILD:-build}/device/bin/driple" --version
contains "$TMP/out" "driple 0.1.0"
finish
