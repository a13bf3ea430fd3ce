#!/bin/sh
# e2e_reliability.sh: issue 17 from the command line. Setting lists that name an unknown GPU, an
# id that disagrees with its fields or a file that is no inspector; a base path over PATH_MAX;
# traces with several GPUs (--gpu-index), a cut row, a year-0000 clock; /dev/zero given to every
# reader; graphs with \u0000 in a name, an ONNX dimension of -5, 2.3e18 elements; "-" as stdin
# for the readers and stdout for the writers; every writer replacing its file whole (a hard link
# to the old file keeps the old content), not through links planted at the old fixed temporary
# names, writing devices and FIFOs in place, saying why /dev/full fails; and a signal while a
# file is being written (held there by strace): SIGINT, SIGTERM and SIGKILL leave the old file
# and nothing else.
. tests/lib.sh
G=samples/graphs/alexnet.json
[ -f "$G" ] || G=tests/data/graph/small.json
INSP=$(pwd)/assets/inspectors/V100-P1w2ho-PCIe.json

# a dataset of 12 simulated samples (train reads it)
mk_ds() {
    printf '{"format": "driple-dataset/1", "setting": "V100-P1w2ho-PCIe", "outputs": ["gpu_mem_util.idle", "gpu_mem_util.active", "gpu_mem_util.peak", "gpu_util.idle", "gpu_util.active", "gpu_util.peak", "net_rx.idle", "net_rx.active", "net_rx.peak", "net_tx.idle", "net_tx.active", "net_tx.peak"], "samples": ['
    i=0
    while [ $i -lt 12 ]; do
        [ $i -gt 0 ] && printf ','
        printf '{"graph": "g%d", "model": "m%d", "batch": 32, "labels": [1,2,3,4,5,6,7,8,9,10,11,%d], "source": {"kind": "simulated", "where": "e2e_reliability.sh"}, "grouped": {"groups": [[%d, 3, 0.5], [2, 2, 0.25]], "edges": [[0, 1]]}}' $i $((i % 3)) $((i + 1)) $((i + 1))
        i=$((i + 1))
    done
    printf ']}\n'
}
mk_ds >"$TMP/ds.json"

# ---- setting lists ----
list() { # list FILE GPU PS EXTRA: a one-setting list with id V100-P1w2ho-PCIe
    printf '{"format": "driple-settings/1", "settings": [{"id": "V100-P1w2ho-PCIe", "gpu": "%s", "ps": %s, "workers": 2, "network": "PCIe"%s}]}\n' "$2" "$3" "$4" >"$1"
}
list "$TMP/unknown_gpu.json" GeForce-9999-Ultra 1 ", \"inspector\": \"$INSP\""
want='unknown_gpu.json:$.settings[0].gpu: "GeForce-9999-Ultra" is not in the GPU catalog'
fails 1 "$want" "$DRIPLE" predict "$G" --settings "$TMP/unknown_gpu.json" --setting V100-P1w2ho-PCIe
fails 1 "$want" "$DRIPLE" predict "$G" --settings "$TMP/unknown_gpu.json" --inspector "$INSP"
fails 1 "$want" "$DRIPLE" compare "$G" --settings "$TMP/unknown_gpu.json"
fails 1 "$want" "$DRIPLE" explain "$G" --settings "$TMP/unknown_gpu.json" --setting V100-P1w2ho-PCIe
fails 1 "$want" "$DRIPLE" simulate "$G" --settings "$TMP/unknown_gpu.json" --setting V100-P1w2ho-PCIe
list "$TMP/id_ps.json" V100-PCIe-16GB 3 ""
want="id_ps.json:\$.settings[0].id: \"V100-P1w2ho-PCIe\" disagrees with the setting's fields (they make V100-P3w2ho-PCIe)"
fails 1 "$want" "$DRIPLE" simulate "$G" --settings "$TMP/id_ps.json" --setting V100-P1w2ho-PCIe
fails 1 "$want" "$DRIPLE" predict "$G" --settings "$TMP/id_ps.json" --setting V100-P1w2ho-PCIe
# a free-form id is the user's
printf '{"format": "driple-settings/1", "settings": [{"id": "my-cluster", "gpu": "V100-PCIe-16GB", "ps": 3, "workers": 2, "network": "PCIe"}]}\n' >"$TMP/free.json"
ok "$DRIPLE" simulate "$G" --settings "$TMP/free.json" --setting my-cluster
# an inspector path naming a file that is no inspector: the list and place named, no byte quoted
printf 'secret-token-4f2a: do not show\n' >"$TMP/secret.txt"
list "$TMP/bad_insp.json" V100-PCIe-16GB 1 ", \"inspector\": \"$TMP/secret.txt\""
want="bad_insp.json:\$.settings[0].inspector: $TMP/secret.txt:1:1: not JSON"
fails 1 "$want" "$DRIPLE" predict "$G" --settings "$TMP/bad_insp.json" --setting V100-P1w2ho-PCIe --setting-aware none
if grep -q secret-token "$TMP/err"; then fail "the message quotes the file"; else pass; fi
fails 1 "$want" "$DRIPLE" explain "$G" --settings "$TMP/bad_insp.json" --setting V100-P1w2ho-PCIe --setting-aware none
# a base path over PATH_MAX is named, not 'cannot load base inspector: : cannot open'
long=$(awk 'BEGIN { while (n++ < 5000) printf "x" }')
sed "1s/^{/{\"base\": \"$long\", /" "$INSP" >"$TMP/long_base.json"
fails 1 "long_base.json:\$.base: 'xxxxxxxx" "$DRIPLE" inspector info "$TMP/long_base.json"
contains "$TMP/err" "(5000 characters) makes a path longer than 4095"

# ---- traces ----
smi_hdr='timestamp, index, utilization.gpu [%], memory.used [MiB]'
{
    echo "$smi_hdr"
    for t in 0 1 2 3 4 5; do
        u0=$((t % 2 * 80 + 5)); u1=$((t % 3 * 30 + 10))
        echo "2024/02/01 00:00:00.${t}00, 0, $u0 %, 1 MiB"
        echo "2024/02/01 00:00:00.${t}00, 1, $u1 %, 2 MiB"
    done
} >"$TMP/two.csv"
ok "$DRIPLE" trace extract "$TMP/two.csv"
contains "$TMP/out" "GPU 0 (2 GPUs in the file; --gpu-index picks another)"
ok "$DRIPLE" trace extract "$TMP/two.csv" --gpu-index 1 --json
contains "$TMP/out" '"gpu_index": "1", "gpus_in_file": 2'
p1=$(sed 's/.*"gpu_util.peak":\([0-9.e+-]*\).*/\1/' "$TMP/out")
"$DRIPLE" trace extract "$TMP/two.csv" --json >"$TMP/g0.json" 2>/dev/null
p0=$(sed 's/.*"gpu_util.peak":\([0-9.e+-]*\).*/\1/' "$TMP/g0.json")
if [ -n "$p0" ] && [ "$p0" != "$p1" ]; then pass; else fail "--gpu-index 1 gave GPU 0's peak ($p0 / $p1)"; fi
fails 1 "two.csv: no rows of GPU 7 (the file has GPUs 0 and 1)" "$DRIPLE" trace extract "$TMP/two.csv" --gpu-index 7
{
    echo 'timestamp, utilization.gpu [%]'
    for t in 0 1 2 3; do echo "2024/02/01 00:00:00.${t}00, 5 %"; echo "2024/02/01 00:00:00.${t}00, 70 %"; done
} >"$TMP/noindex.csv"
fails 1 "rows repeat the time of the row before: rows of several GPUs?" "$DRIPLE" trace extract "$TMP/noindex.csv"
printf 't_ms,gpu_util\n0,50\n100,989.596\n200,9' >"$TMP/cut.csv"
fails 1 "cut.csv:4: the file ends inside this row" "$DRIPLE" trace extract "$TMP/cut.csv"
printf '%s\n0000/01/01 00:00:00.000, 0, 5 %%, 1 MiB\n2024/02/01 00:00:00.100, 0, 90 %%, 1 MiB\n' "$smi_hdr" >"$TMP/year0.csv"
fails 1 "year0.csv:2: bad timestamp" "$DRIPLE" trace extract "$TMP/year0.csv"
# (timeout: the old reader never ended)
fails 1 "/dev/zero: byte 0 is NUL" timeout 60 "$DRIPLE" trace extract /dev/zero
fails 1 "/dev/zero: not a zip archive" timeout 60 "$DRIPLE" inspector import-torch /dev/zero --layer gcn -o "$TMP/x.json"

# every reader given an endless stream stops at once (a NUL in a text format, a wrong head in a
# binary one), under a timeout (the old readers read 2 or 4 GiB first, or never ended)
I=V100-P1w2ho-PCIe
zero() { want=$1; shift; fails 1 "/dev/zero: $want" timeout 60 "$DRIPLE" "$@"; }
zero "not a graph this build reads" graph info /dev/zero
zero "byte 0 is NUL: not a grouped graph" predict --grouped /dev/zero --setting $I
zero "byte 0 is NUL: not a setting list" simulate "$G" --settings /dev/zero --setting $I
zero "byte 0 is NUL: not an inspector" predict "$G" --inspector /dev/zero
zero "byte 0 is NUL: not an inspector" inspector info /dev/zero
zero "byte 0 is NUL: not a dataset" train --dataset /dev/zero -o "$TMP/m.json"
zero "byte 0 is NUL: not an op-type weights file" predict "$G" --setting $I --weights /dev/zero
zero "byte 0 is NUL: not a GPU catalog" simulate "$G" --setting $I --gpus /dev/zero
zero "byte 0 is NUL: not a throughput table" calibrate --data /dev/zero
# an endless graph text (a JSON head, then blanks for ever) stops at the text formats' 256 MiB,
# not at ONNX's 2 GiB; a larger text file is refused before it is read
{ printf '{"format":"driple-graph/1","nodes":['; yes ' ' | tr -d '\n'; } |
    "$DRIPLE" graph info - >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ] && grep -qF "stdin: more than 256 MiB and still going" "$TMP/err"; then pass
else fail "endless graph text: exit $rc, $(head -c 300 "$TMP/err")"; fi

# ---- graphs ----
# \u0000 inside a name: refused (cJSON cut the name there: 'a\u0000b' became 'a')
printf '{"format": "driple-graph/1", "name": "n", "nodes": [{"name": "a\\u0000b", "op": "Relu", "device": "/gpu:0", "shape": [4]}]}\n' >"$TMP/nul.json"
fails 1 'nul.json:1:64: \u0000 (a NUL character) inside a string' "$DRIPLE" graph info "$TMP/nul.json"
# an ONNX dimension of -5 (it was taken as the batch)
fails 1 "negative_dim.onnx:byte 49: 'x' dimension 0 is -5 (negative)" "$DRIPLE" graph info tests/data/fuzz/onnx/negative_dim.onnx
# 2.3e18 tensor elements (each dimension within 2^53, each product within 64 bits): predict
# refuses as simulate does (it printed figures)
printf '{"format": "driple-graph/1", "name": "big", "batch": 16, "nodes": [{"name": "a", "op": "Const", "device": "/gpu:0", "shape": [1073741824, 1073741824]}, {"name": "b", "op": "Relu", "device": "/gpu:0", "inputs": ["a"], "shape": [-1, 1073741824, 67108864]}]}\n' >"$TMP/big.json"
want="big.json: big: its tensors hold 2.31e+18 elements at batch 16: more than 2^53, beyond any GPU"
fails 1 "$want" "$DRIPLE" predict "$TMP/big.json" --setting $I
fails 1 "$want" "$DRIPLE" compare "$TMP/big.json"
fails 1 "$want" "$DRIPLE" explain "$TMP/big.json" --setting $I

# ---- "-": standard input for a reader, standard output for a writer ----
ok sh -c "'$DRIPLE' trace extract - <'$TMP/two.csv'"
contains "$TMP/out" "labels from -"
ok sh -c "'$DRIPLE' graph info - <'$G'"
contains "$TMP/out" "ops"
ok sh -c "'$DRIPLE' inspector info - <'$INSP'"
ok sh -c "'$DRIPLE' graph coarsen - -o - <'$G'"
contains "$TMP/out" 'driple-grouped/1'
"$DRIPLE" graph coarsen "$G" -o "$TMP/g.grouped.json" >/dev/null 2>&1
ok sh -c "'$DRIPLE' predict --grouped - --setting V100-P1w2ho-PCIe <'$TMP/g.grouped.json'"
ok sh -c "'$DRIPLE' inspector import-torch - --layer gcn -o - <../shared/reference/driple_pretrain_gcn.pkl"
contains "$TMP/out" 'driple-inspector/1'
ok "$DRIPLE" explain "$G" --setting V100-P1w2ho-PCIe --svg -
contains "$TMP/out" "<svg"
ok "$DRIPLE" simulate "$G" --setting V100-P1w2ho-PCIe --trace -
contains "$TMP/out" "worker,t_ms,gpu_util"
ok "$DRIPLE" trace extract "$TMP/two.csv" --driple-csv -
contains "$TMP/out" "GPU,Model"
fails 2 "would both go to stdout" "$DRIPLE" explain "$G" --setting V100-P1w2ho-PCIe --svg - --json
ok "$DRIPLE" explain "$G" --setting $I --dot -
contains "$TMP/out" "graph grouped {"
ok "$DRIPLE" graph import "$G" -o -
contains "$TMP/out" '"format":"driple-graph/1"'
ok "$DRIPLE" zoo build alexnet -o -
contains "$TMP/out" '"format":"driple-graph/1"'
ok sh -c "'$DRIPLE' simulate '$G' --settings - --setting my-cluster <'$TMP/free.json'"
fails 1 'stdin:$.settings[0].gpu: "GeForce-9999-Ultra"' sh -c "'$DRIPLE' simulate '$G' --settings - --setting $I <'$TMP/unknown_gpu.json'"
fails 1 "stdin: no rows" sh -c "'$DRIPLE' calibrate --data - </dev/null"
ok sh -c "'$DRIPLE' predict '$G' --inspector - <'$INSP'"
contains "$TMP/out" "gpu_util"
ok sh -c "'$DRIPLE' predict '$G' --setting $I --weights - <assets/op_weights.json"
ok sh -c "'$DRIPLE' simulate '$G' --setting $I --gpus - <assets/gpus.json"
ok sh -c "'$DRIPLE' calibrate --data - --no-logo <../shared/calibration/throughput_published.csv"
contains "$TMP/out" "published rows"
ok sh -c "'$DRIPLE' train --dataset - -o - --hidden 4 --epochs 1 <'$TMP/ds.json'"
contains "$TMP/out" "driple-inspector/1"

# ---- every writer replaces its file whole ----
# replaced OUT CMD...: OUT exists (with a hard link to it) before CMD; after, OUT is new and the
# link keeps the old content (renamed into place, not written over), and nothing else is left
replaced() {
    out=$1; shift
    mkdir -p "$TMP/w"; rm -rf "$TMP/w"/* "$TMP/w"/.[!.]*
    echo "old content" >"$out"
    ln "$out" "$TMP/w/old-link"
    ok "$@"
    if [ "$(cat "$TMP/w/old-link")" = "old content" ] && ! cmp -s "$out" "$TMP/w/old-link"; then pass
    else fail "$*: wrote over $out in place"; fi
    left=$(ls -A "$TMP/w" | sort | tr '\n' ' ')
    if [ "$left" = "$(printf '%s\n' "$(basename "$out")" old-link | sort | tr '\n' ' ')" ]; then pass
    else fail "$*: left $left"; fi
}
replaced "$TMP/w/g.json" "$DRIPLE" graph import "$G" -o "$TMP/w/g.json"
replaced "$TMP/w/c.json" "$DRIPLE" graph coarsen "$G" -o "$TMP/w/c.json"
replaced "$TMP/w/z.json" "$DRIPLE" zoo build alexnet -o "$TMP/w/z.json"
replaced "$TMP/w/t.csv" "$DRIPLE" simulate "$G" --setting V100-P1w2ho-PCIe --trace "$TMP/w/t.csv"
replaced "$TMP/w/e.svg" "$DRIPLE" explain "$G" --setting V100-P1w2ho-PCIe --svg "$TMP/w/e.svg"
replaced "$TMP/w/e.dot" "$DRIPLE" explain "$G" --setting V100-P1w2ho-PCIe --dot "$TMP/w/e.dot"
replaced "$TMP/w/d.csv" "$DRIPLE" trace extract "$TMP/two.csv" --driple-csv "$TMP/w/d.csv"
replaced "$TMP/w/i.json" "$DRIPLE" inspector import-torch ../shared/reference/driple_pretrain_gcn.pkl --layer gcn -o "$TMP/w/i.json"

# links planted at the fixed temporary names the writers used send nothing elsewhere
echo decoy >"$TMP/decoy"
rm -f "$TMP/p.json" "$TMP/p.csv"
ln -s "$TMP/decoy" "$TMP/p.json.tmp~"
ln -s "$TMP/decoy" "$TMP/p.csv.tmp"
ok "$DRIPLE" graph coarsen "$G" -o "$TMP/p.json"
ok "$DRIPLE" trace extract "$TMP/two.csv" --driple-csv "$TMP/p.csv"
if [ "$(cat "$TMP/decoy")" = decoy ] && [ -f "$TMP/p.json" ] && [ ! -L "$TMP/p.json" ] &&
   [ -f "$TMP/p.csv" ] && [ ! -L "$TMP/p.csv" ]; then pass; else fail "a planted link redirected a write"; fi
# a FIFO is written through and stays a FIFO; /dev/full says what failed
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
cat_pid=$!
ok "$DRIPLE" trace extract "$TMP/two.csv" --driple-csv "$TMP/fifo"
sleep 0.2; kill $cat_pid 2>/dev/null; wait $cat_pid 2>/dev/null # (a FIFO replaced: no writer ever)
if [ -p "$TMP/fifo" ] && grep -q "GPU,Model" "$TMP/fifo.out"; then pass; else fail "--driple-csv FIFO: not written through"; fi
fails 1 "/dev/full: write failed: No space left on device" "$DRIPLE" trace extract "$TMP/two.csv" --driple-csv /dev/full
fails 1 "/dev/full: write failed: No space left on device" "$DRIPLE" explain "$G" --setting V100-P1w2ho-PCIe --svg /dev/full
fails 1 "/dev/full: write failed: No space left on device" "$DRIPLE" graph coarsen "$G" -o /dev/full

# ---- a signal while the file is written ----
# held SYSCALL SIG DIR OUT CMD...: CMD runs under strace, which holds every SYSCALL (write or
# rename) 1.5 s on entry; once CMD is inside one on a file (a write to fd >= 3), SIG is sent.
# Afterwards DIR holds what it held before, and OUT (when it existed) its old content.
if ! command -v strace >/dev/null 2>&1 || [ "$(uname -m)" != x86_64 ]; then
    echo "e2e_reliability.sh: strace (x86_64) unavailable: the signal-while-writing checks are NOT run" >&2
    fail "strace missing"
else
held() {
    sc=$1 sig=$2 dir=$3 out=$4; shift 4
    nr=1; [ "$sc" = rename ] && nr=82
    before=$(ls -A "$dir" | tr '\n' ' ')
    old=$(cat "$out" 2>/dev/null)
    rm -f "$TMP/held.pid"
    # (env --default-signal: a command started with & in a script ignores SIGINT, and driple
    # leaves a signal ignored at its start ignored)
    strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc":delay_enter=1500000 \
        env --default-signal=INT sh -c 'echo $$ >"$0"; exec "$@"' "$TMP/held.pid" "$@" \
        >/dev/null 2>&1 &
    spid=$!
    i=0; hit=
    while [ $i -lt 600 ] && [ -z "$hit" ] && kill -0 $spid 2>/dev/null; do
        [ -s "$TMP/held.pid" ] && case "$(cat "/proc/$(cat "$TMP/held.pid")/syscall" 2>/dev/null)" in
            "$nr 0x0 "* | "$nr 0x1 "* | "$nr 0x2 "*) [ $nr = 82 ] && hit=1 ;;
            "$nr "*) hit=1 ;;
        esac
        [ -z "$hit" ] && sleep 0.05; i=$((i + 1))
    done
    [ -n "$hit" ] && kill -"$sig" "$(cat "$TMP/held.pid")"
    wait $spid
    if [ -z "$hit" ]; then fail "SIG$sig: $*: never held in $sc"; return; fi
    after=$(ls -A "$dir" | tr '\n' ' ')
    new=$(cat "$out" 2>/dev/null)
    if [ "$after" = "$before" ] && { [ "$new" = "$old" ] ||
        { [ -n "${HELD_ALSO:-}" ] && [ "$new" = "$(cat "$HELD_ALSO")" ]; }; }; then pass
    else fail "SIG$sig in $sc: $*: left '$after' (before '$before'), $out now $(printf '%s' "$new" | head -c 40)"; fi
    # what a failed check left goes, so that it does not hide what the next one leaves
    for f in $after; do case " $before " in *" $f "*) ;; *) rm -rf "${dir:?}/$f" ;; esac; done
}
mkdir -p "$TMP/k"
echo '{"old": true}' >"$TMP/k/c.json"
for sig in INT TERM KILL; do
    held write $sig "$TMP/k" "$TMP/k/c.json" "$DRIPLE" graph coarsen "$G" -o "$TMP/k/c.json"
    held write $sig "$TMP/k" "$TMP/k/new.json" "$DRIPLE" zoo build alexnet -o "$TMP/k/new.json"
done
# explain --svg: the old drawing stays whole (it was truncated before the layout: kill -9 left 0
# bytes)
echo '<svg>old</svg>' >"$TMP/k/e.svg"
held write KILL "$TMP/k" "$TMP/k/e.svg" "$DRIPLE" explain "$G" --setting $I --svg "$TMP/k/e.svg"
# between the file's temporary name and its rename: SIGINT and SIGTERM remove it (SIGKILL
# cannot be caught there: README). A rename already entered when the signal comes completes
# before the handler runs in a process of one thread (no other thread to take the signal): the
# target is then the whole new file (HELD_ALSO), never a part of it.
"$DRIPLE" graph coarsen "$G" -o "$TMP/whole.json" 2>/dev/null
for sig in INT TERM; do
    HELD_ALSO="$TMP/whole.json"
    held rename $sig "$TMP/k" "$TMP/k/c.json" "$DRIPLE" graph coarsen "$G" -o "$TMP/k/c.json"
    HELD_ALSO=""
    echo '{"old": true}' >"$TMP/k/c.json"
done
# train (SIGTERM: its first SIGINT stops training and still writes the best model) and dataset
# build
echo '{"old": true}' >"$TMP/k/m.json"
for sig in TERM KILL; do
    held write $sig "$TMP/k" "$TMP/k/m.json" "$DRIPLE" train --dataset "$TMP/ds.json" -o "$TMP/k/m.json" --hidden 4 --epochs 1
done
mkdir -p "$TMP/k/ds"
for sig in INT KILL; do
    held write $sig "$TMP/k/ds" "$TMP/k/ds/none" "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/k/ds" --models alexnet --graphs 2
done
fi

finish
