# e2e_sim.sh: driple simulate / trace extract / calibrate / dataset build end to end: JSON
# shapes, "simulated" labels everywhere, trace round trip, DriplePerf CSV, and bad input
# failing with file and place.
. tests/lib.sh
G="$TMP/g.json"
ok "$DRIPLE" zoo build squeezenet --batch 8 -o "$G"

# simulate by setting id and by an on-the-fly setting
ok "$DRIPLE" simulate "$G" --setting V100-P1w2ho-PCIe --json
contains "$TMP/out" '"simulated": true'
contains "$TMP/out" '"iteration_ms": '
contains "$TMP/out" '"labels": {"gpu_mem_util": {"idle": '
contains "$TMP/out" '"net_tx": {"idle": '
contains "$TMP/out" '"oom": false'
ok "$DRIPLE" simulate zoo:alexnet --gpu H100-SXM --workers 4 --ps 2 --network IB-HDR \
    --placement hetero --precision mixed --batch 64 --seed 3 --trace "$TMP/tr.csv" --json
contains "$TMP/out" '"setting": "H100-P2w4he-IB-HDR-M4x2-mixed"'
contains "$TMP/out" '"machines": 4'
contains "$TMP/tr.csv" '# simulated by driple (not measured)'
contains "$TMP/tr.csv" 'worker,t_ms,gpu_util,gpu_mem_util,mem_used_mib,net_rx,net_tx'
ok "$DRIPLE" simulate "$G" --setting V100-P1w2ho-PCIe
contains "$TMP/out" 'SIMULATED (not measured)'
# same seed, same answer
"$DRIPLE" simulate "$G" --setting TitanRTX-P2w4he-40GbE --seed 9 --json >"$TMP/a.json"
"$DRIPLE" simulate "$G" --setting TitanRTX-P2w4he-40GbE --seed 9 --json >"$TMP/b.json"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then pass; else fail "simulate is not deterministic"; fi
# a huge batch does not fit
ok "$DRIPLE" simulate zoo:vgg16 --setting 2080Ti-P1w2ho-PCIe --batch 4096 --json
contains "$TMP/out" '"oom": true'
# memory against what is known to run: tf_cnn_benchmarks ran ResNet-152 at batch 64 on a 16 GB
# P100, but used 64, not 128; BERT-large at sequence 128, batch 64, fp32 with Adam cannot fit a
# 16 GB V100 (Google's BERT README: batch 6 at most on a 12 GB GPU); GPT-2 medium at 1024
# tokens, batch 8, fp32 neither (attention scores alone: 24 layers x 16 heads x 1024^2 x 4 B
# x 8 = 13 GB)
ok "$DRIPLE" simulate zoo:resnet152 --gpu P100-SXM2 --workers 1 --ps 1 --network PCIe --batch 64 --json
contains "$TMP/out" '"oom": false'
ok "$DRIPLE" simulate zoo:resnet152 --gpu P100-SXM2 --workers 1 --ps 1 --network PCIe --batch 128 --json
contains "$TMP/out" '"oom": true'
ok "$DRIPLE" zoo build bert_large --batch 64 --seq 128 --optimizer adam -o "$TMP/bert.json"
ok "$DRIPLE" simulate "$TMP/bert.json" --gpu V100-PCIe-16GB --workers 1 --ps 1 --network PCIe --json
contains "$TMP/out" '"oom": true'
ok "$DRIPLE" zoo build gpt2_medium --batch 8 --seq 1024 --optimizer adam -o "$TMP/gpt2.json"
ok "$DRIPLE" simulate "$TMP/gpt2.json" --gpu V100-PCIe-16GB --workers 1 --ps 1 --network PCIe --json
contains "$TMP/out" '"oom": true'

# the trace back to labels (mean over the workers, like simulate's)
"$DRIPLE" simulate zoo:alexnet --gpu H100-SXM --workers 4 --ps 2 --network IB-HDR --placement hetero \
    --precision mixed --batch 64 --seed 3 --trace "$TMP/tr2.csv" --json >"$TMP/sim.json"
ok "$DRIPLE" trace extract "$TMP/tr2.csv" --json
contains "$TMP/out" '"simulated": true'
contains "$TMP/out" '"workers": 4'
python3 - "$TMP/sim.json" "$TMP/out" <<'EOF' && pass || fail "trace extract labels differ from simulate's"
import json, sys
a = json.load(open(sys.argv[1]))["labels"]; b = json.load(open(sys.argv[2]))["labels"]
for r in a:
    for k in a[r]:
        assert abs(a[r][k] - b[r][k]) <= 1e-3 * max(1.0, abs(a[r][k])), (r, k, a[r][k], b[r][k])
EOF

# real nvidia-smi syntax plus network counters; DriplePerf CSV out
cat >"$TMP/smi.csv" <<'EOF'
timestamp, utilization.gpu [%], utilization.memory [%], memory.used [MiB]
2024/01/31 12:00:00.000, 0 %, 0 %, 500 MiB
2024/01/31 12:00:00.100, 90 %, 40 %, 9000 MiB
2024/01/31 12:00:00.200, 95 %, 45 %, 9000 MiB
2024/01/31 12:00:00.300, 0 %, 0 %, 9000 MiB
2024/01/31 12:00:00.400, 0 %, 0 %, 9000 MiB
2024/01/31 12:00:00.500, 80 %, 30 %, 9000 MiB
2024/01/31 12:00:00.600, 0 %, 0 %, 9000 MiB
EOF
cat >"$TMP/net.csv" <<'EOF'
timestamp,rx_bytes,tx_bytes
1706702400.0,0,0
1706702400.1,10000000,0
1706702400.2,10000000,5000000
1706702400.3,10000000,5000000
EOF
ok "$DRIPLE" trace extract "$TMP/smi.csv" --net "$TMP/net.csv" --json --driple-csv "$TMP/dp.csv" \
    --gpu V100 --model resnet50 --batch 32
contains "$TMP/out" '"gpu_util": {"idle": 200, "active": 150, "peak": 87.5}'
contains "$TMP/out" '"net_rx": {"idle": 200, "active": 100, "peak": 100}'
contains "$TMP/out" '"simulated": false'
contains "$TMP/dp.csv" 'GPU,Model,Data Set,Sync/Async,Hyper-Parameter,Job Name,Resource'
contains "$TMP/dp.csv" 'V100,resnet50'
ok "$DRIPLE" trace extract "$TMP/smi.csv" --threshold 0.95
contains "$TMP/out" 'threshold 0.95'

# --xla (TensorFlow's XLA auto-clustering): ResNet-50's batch norms fuse with their Relus, so
# its step is faster; VGG16 has no batch norm and runs as without it; PyTorch refuses it
XA="--gpu RTX2080Ti --workers 1 --sync allreduce --network PCIe --precision mixed --batch 64 --json"
for m in resnet50 vgg16; do
    "$DRIPLE" simulate zoo:$m $XA >"$TMP/$m.json"
    "$DRIPLE" simulate zoo:$m $XA --xla >"$TMP/$m-xla.json"
done
python3 - "$TMP" <<'EOF' && pass || fail "simulate --xla: ResNet-50 not faster or VGG16 moved"
import json, sys
t = {f: json.load(open("%s/%s.json" % (sys.argv[1], f)))
     for f in ("resnet50", "resnet50-xla", "vgg16", "vgg16-xla")}
assert t["resnet50-xla"]["xla"] and not t["resnet50"]["xla"]
assert t["resnet50-xla"]["throughput"] > 1.03 * t["resnet50"]["throughput"], t
assert t["vgg16-xla"]["throughput"] == t["vgg16"]["throughput"], t
EOF
fails 2 "--xla is TensorFlow's" "$DRIPLE" simulate zoo:resnet50 $XA --framework pytorch --xla

# bad input: file and line, usage errors exit 2
printf 'timestamp, utilization.gpu [%%]\n2024/01/31 12:00:00.000, 12 %%\n2024/01/31 12:00:00.100, x %%\n' >"$TMP/bad.csv"
fails 1 "bad.csv:3" "$DRIPLE" trace extract "$TMP/bad.csv"
fails 1 "nope.csv: cannot open" "$DRIPLE" trace extract "$TMP/nope.csv"
fails 2 "missing TRACE.csv" "$DRIPLE" trace extract
fails 2 "unknown network" "$DRIPLE" simulate "$G" --gpu V100-PCIe-16GB --workers 2 --ps 1 --network 3GbE
fails 1 "no setting" "$DRIPLE" simulate "$G" --setting NoSuch-P1w1ho-PCIe
fails 2 "--gpu Voodoo: no such GPU" "$DRIPLE" simulate "$G" --gpu Voodoo --workers 2 --ps 1 --network PCIe
fails 2 "hetero" "$DRIPLE" simulate "$G" --gpu V100-PCIe-16GB --workers 2 --ps 1 --network PCIe --placement hetero
fails 2 "exclude each other" "$DRIPLE" simulate "$G" --setting V100-P1w2ho-PCIe --workers 3
fails 2 "give --setting" "$DRIPLE" simulate "$G"
printf '{"format":"driple-settings/1","settings":[{"gpu":"V100","ps":1}]}' >"$TMP/s.json"
fails 1 "s.json:\$.settings[0].workers: missing" "$DRIPLE" simulate "$G" --setting x --settings "$TMP/s.json"
printf '{"format":"driple-settings/1","settings":[{"id":"a","gpu":"V100","ps":1,"workers":2,"network":"PCIe"},{"id":"A","gpu":"V100","ps":1,"workers":4,"network":"PCIe"}]}' >"$TMP/s2.json"
fails 1 "s2.json:\$.settings[1].id: \"A\" appears twice" "$DRIPLE" simulate "$G" --setting a --settings "$TMP/s2.json"
# absurd options fail with a reason (they used to print all-zero labels, or run out of memory)
fails 1 "0 trace sample(s)" "$DRIPLE" simulate "$G" --gpu V100-PCIe-16GB --workers 2 --ps 1 --network PCIe --sample-ms 60000
fails 1 "trace samples over the workers" "$DRIPLE" simulate "$G" --gpu V100-PCIe-16GB --workers 2 --ps 1 --network 1GbE --sample-ms 0.01 --iterations 5000 --batch 4096
# a GPU without the figures the simulator needs is named with its catalog entry
printf '{"format":"driple-gpus/1","gpus":[{"name":"X1","fp32_tflops":null,"bandwidth_gbps":100}]}' >"$TMP/gpus.json"
fails 1 "gpus.json:\$.gpus[0]: X1 has no known fp32_tflops" "$DRIPLE" simulate "$G" --gpus "$TMP/gpus.json" --gpu X1 --workers 2 --ps 1 --network PCIe
# ... but its memory footprint needs no speed figure
contains "$TMP/err" "its simulated memory footprint needs no speed figure: "
printf '{"format":"driple-settings/1","settings":[{"id":"x","gpu":"X1","ps":1,"workers":2,"network":"PCIe"}]}' >"$TMP/sx.json"
fails 1 "gpus.json:\$.gpus[0]: X1 has no known fp32_tflops" "$DRIPLE" dataset build --settings "$TMP/sx.json" --gpus "$TMP/gpus.json" --out "$TMP/dsx"
# one sample has no duration
printf 'timestamp, utilization.gpu [%%]\n2024/01/31 12:00:00.000, 50 %%\n' >"$TMP/one.csv"
fails 1 "one.csv:2: only one sample" "$DRIPLE" trace extract "$TMP/one.csv"
fails 1 "$TMP: is a directory" "$DRIPLE" trace extract "$TMP"


# a small dataset: two models, one setting, simulated labels
ok "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/ds" --models squeezenet,alexnet \
    --graphs 12 --jobs 2 --json
contains "$TMP/out" '"samples": 12'
contains "$TMP/out" '"threads": 2'
contains "$TMP/out" '"jobs_per_s": '
contains "$TMP/ds/V100-P1w2he-40GbE.json" '"kind":"simulated"'
contains "$TMP/ds/V100-P1w2he-40GbE.json" '"format":"driple-dataset/1"'
# the same with one thread: the same samples (only the time stamp may differ)
ok "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/ds1" --models squeezenet,alexnet \
    --graphs 12 --jobs 1
contains "$TMP/out" 'on 1 thread(s), '
contains "$TMP/out" ' jobs/s; writing '
sed 's/"when":"[^"]*"//g' "$TMP/ds/V100-P1w2he-40GbE.json" >"$TMP/a.txt"
sed 's/"when":"[^"]*"//g' "$TMP/ds1/V100-P1w2he-40GbE.json" >"$TMP/b.txt"
if cmp -s "$TMP/a.txt" "$TMP/b.txt"; then pass; else fail "dataset build differs with --jobs 1 and 2"; fi
# optional cost features: kept only when asked for, required by an inspector that reads them
ok "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/dsc" --models squeezenet,alexnet \
    --graphs 12 --jobs 2 --cost-features
contains "$TMP/dsc/V100-P1w2he-40GbE.json" '"format":"driple-dataset/1"'
ok "$DRIPLE" train --dataset "$TMP/dsc/V100-P1w2he-40GbE.json" -o "$TMP/mc.json" --cost-features \
    --epochs 2 --json
contains "$TMP/out" '"n_feat": 6'
fails 1 "has no cost features (flops, bytes, param_bytes): build the dataset with --cost-features" \
    "$DRIPLE" train --dataset "$TMP/ds/V100-P1w2he-40GbE.json" -o "$TMP/m3.json" --cost-features \
    --epochs 2
ok "$DRIPLE" zoo build alexnet -o "$TMP/alexnet.json"
ok "$DRIPLE" predict "$TMP/alexnet.json" --inspector "$TMP/mc.json" --json
contains "$TMP/out" '"metrics"'
# a grouped graph written without cost features (the published reference case): refused, naming the file
fails 1 "sparse100.grouped.json: reference-sparse100: the inspector reads the cost features" \
    "$DRIPLE" predict --grouped ../shared/reference/cases/gcn/sparse100.grouped.json --inspector "$TMP/mc.json"
ok "$DRIPLE" explain "$TMP/alexnet.json" --inspector "$TMP/mc.json"
contains "$TMP/out" "gradient x input (the three features and the three cost features)"
ok "$DRIPLE" explain "$TMP/alexnet.json" --inspector "$TMP/mc.json" --json
if grep -qE '"feature_attribution": \[[^],]*(, [^],]*){5}\]' "$TMP/out"; then pass
else fail "explain --json lacks six feature attributions for a cost-feature inspector"; fi
# generated architectures beside the zoo's jobs: each kept job of one, the same with 1 thread
ok "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/dsg" --models squeezenet \
    --graphs 4 --generated 5 --gen-seed 2 --gen-jobs 2 --json
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
gen = [s for s in d["samples"] if s["model"].startswith("gen-")]
zoo = [s for s in d["samples"] if s["model"] == "squeezenet"]
assert len(zoo) == 4 and 5 <= len(gen) <= 10, (len(zoo), len(gen))
assert all(s["graph"] == "generated:" + s["model"] and s["model"].endswith(("-s2-0", "-s2-1", "-s2-2", "-s2-3", "-s2-4")) for s in gen)' "$TMP/dsg/V100-P1w2he-40GbE.json"
    then pass; else fail "dataset build --generated 5 --gen-jobs 2: 4 zoo and 5-10 generated samples"; fi
fi
ok "$DRIPLE" dataset build --setting V100-P1w2he-40GbE --out "$TMP/dsg1" --models squeezenet \
    --graphs 4 --generated 5 --gen-seed 2 --gen-jobs 2 --jobs 1
sed 's/"when":"[^"]*"//g' "$TMP/dsg/V100-P1w2he-40GbE.json" >"$TMP/a.txt"
sed 's/"when":"[^"]*"//g' "$TMP/dsg1/V100-P1w2he-40GbE.json" >"$TMP/b.txt"
if cmp -s "$TMP/a.txt" "$TMP/b.txt"; then pass; else fail "dataset build --generated differs with --jobs 1 and 2"; fi
fails 2 "--gen-jobs" "$DRIPLE" dataset build --out "$TMP/ds" --generated 2 --gen-jobs 13
# names are checked (by the sweep underneath) before any simulation
fails 1 "unknown zoo model 'resnet9000'" "$DRIPLE" dataset build --out "$TMP/ds" --models resnet9000
fails 1 "unknown optimizer 'rmsprop'" "$DRIPLE" dataset build --out "$TMP/ds" --optimizers sgd,rmsprop
fails 2 "missing --out" "$DRIPLE" dataset build
fails 2 "--models: empty list" "$DRIPLE" dataset build --out "$TMP/ds" --models ""
fails 2 "missing --out" "$DRIPLE" dataset build --out ""
printf '{"format":"driple-settings/1","settings":[]}' >"$TMP/s0.json"
fails 1 "s0.json:\$.settings: empty" "$DRIPLE" dataset build --out "$TMP/ds0" --settings "$TMP/s0.json"
# an unusable output directory fails before any simulation
fails 1 "g.json: cannot create directory: Not a directory" "$DRIPLE" dataset build --out "$G" --models squeezenet
fails 2 "--optimizers: empty list" "$DRIPLE" dataset build --out "$TMP/ds" --optimizers ""
# dataset eval is inspector eval: its arguments are checked the same way
fails 2 "needs M.json and --dataset D.json" "$DRIPLE" dataset eval
finish
