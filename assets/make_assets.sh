#!/bin/sh
# make_assets.sh: the shipped inspectors, reproducibly from seeds (`make assets`).
#  1. two simulated sweeps (driple dataset sweep; every label SIMULATED):
#     - the list sweep: every zoo model x optimizer x 12 batch sizes, in fp32 and mixed
#       precision, on every setting of assets/settings/default.json of its precision (the
#       per-setting inspectors' data);
#     - the setting-aware sweep: every zoo model x optimizer x SA_ZOO_BATCHES batch sizes and GEN
#       generated architectures x 2 batch sizes, in fp32 and mixed, each on NRANDOM settings drawn
#       from the catalog's GPUs (1 .. 64 workers, PS or all-reduce, TensorFlow or PyTorch, every
#       network) and on every list setting (all zoo graphs, the first QUOTA generated ones);
#     jobs that do not fit a GPU's memory are kept out;
#  2. a per-setting dataset for every list setting, its rows of the list sweep (driple dataset
#     extract, the sweep read once);
#  3. two inspectors trained from scratch on one setting at once (driple train --recipe
#     driple-c, notes/accuracy.md), on a random 60/20/20 split: the per-setting base, which also
#     reads each group's FLOPs, bytes and parameter bytes (--cost-features: the datasets are
#     extracted with them; notes/accuracy.md experiments K, V), and without them the body of the
#     setting-aware inspector (inspectors/setting-aware-body.json: the cost features do not carry
#     to unseen families);
#  4. in two lanes at once (the machine's two cores; each step one process):
#     lane 1: the setting-aware inspector (driple train --sweep: that body, an ensemble of
#       SA_MEMBERS heads reading the graph's profile and the setting; shipped as
#       inspectors/setting-aware.json) on a random split of the sweep's graphs, then again
#       holding out whole GPUs (SA_GPUS; not shipped, SA_HOLD_MEMBERS heads: as many as the
#       shipped one has, so the hold-outs measure its ensemble), then the base and transfers on
#       a split that holds out whole model families;
#     lane 2: a transferred inspector for every other list setting (driple transfer: the base's
#       GNN body is kept, only the head learns; the file stores what differs and names the base),
#       the setting-aware inspector holding out whole model families and whole networks
#       (SA_NETS) (hold-outs: HOLDOUT=1, the default; not shipped);
#  5. notes/assets.md: errors per metric and setting, the setting-aware inspector's per output
#     and per hold-out (MAPE, R^2, coverage of its 80% interval), and the time each step took.
# Every label is SIMULATED (notes/calibration.md), not measured.
# Environment: JOBS (sweep threads, 2), RECIPE (driple-c), EPOCHS / PATIENCE / TEPOCHS (empty: the
# recipe's), BASE (the base setting, V100-P1w2ho-PCIe), SEED (1), GEN (generated architectures,
# 3000), SA_ZOO_BATCHES (4), QUOTA (generated graphs per list setting, 60), NRANDOM (random
# settings per graph, 12), SA_MEMBERS (5), SA_HOLD_MEMBERS (5), SA_EPOCHS (120), SA_PATIENCE (15),
# SA_GPUS / SA_NETS (held out), HOLDOUT (1), ONLY (space-separated setting ids to transfer to;
# default all); DS, LOG, OUT, NOTES (paths); NOTES_ONLY=1 rewrites notes/assets.md from the logs
# of the last run. With GEN 5000, NRANDOM 6 and SA_EPOCHS 150 the run took 53 minutes on the
# project's 2-core machine while other work ran (load 3-7; notes/accuracy.md, experiments I);
# more settings per graph for about as many rows, and 120 epochs, keep it under the hour
# (experiments J; each step's time in notes/assets.md). Fewer graphs on more settings each
# predict unseen GPUs better for as many rows (experiments J and N): GEN 3000 x NRANDOM 12.
set -eu
BIN=${1:-build/driple}
JOBS=${JOBS:-2}
RECIPE=${RECIPE:-driple-c}
EPOCHS=${EPOCHS:-}
PATIENCE=${PATIENCE:-}
TEPOCHS=${TEPOCHS:-}
BASE=${BASE:-V100-P1w2ho-PCIe}
SEED=${SEED:-1}
GEN=${GEN:-3000}
SA_ZOO_BATCHES=${SA_ZOO_BATCHES:-4}
QUOTA=${QUOTA:-60}
NRANDOM=${NRANDOM:-12}
SA_MEMBERS=${SA_MEMBERS:-5}
SA_HOLD_MEMBERS=${SA_HOLD_MEMBERS:-5}
SA_EPOCHS=${SA_EPOCHS:-120}
SA_PATIENCE=${SA_PATIENCE:-15}
SA_GPUS=${SA_GPUS:-A100-40GB-SXM,T4,RTX3090,H200,V100-SXM2-32GB,L4}
SA_VAL_GPUS=${SA_VAL_GPUS:-A10,RTX4090,P100-SXM2}
SA_NETS=${SA_NETS:-25GbE,IB-EDR}
SA_VAL_NETS=${SA_VAL_NETS:-40GbE}
HOLDOUT=${HOLDOUT:-1}
SETTINGS=assets/settings/default.json
DS=${DS:-build/assets/datasets}
LOG=${LOG:-build/assets/logs}
OUT=${OUT:-assets/inspectors}
NOTES=${NOTES:-notes/assets.md}
TOPT=""
[ -n "$EPOCHS" ] && TOPT="$TOPT --epochs $EPOCHS"
[ -n "$PATIENCE" ] && TOPT="$TOPT --patience $PATIENCE"
XOPT=""
[ -n "$TEPOCHS" ] && XOPT="$XOPT --epochs $TEPOCHS"
[ -n "$PATIENCE" ] && XOPT="$XOPT --patience $PATIENCE"
SAOPT="--epochs $SA_EPOCHS --patience $SA_PATIENCE --seed $SEED --json"

[ -x "$BIN" ] || { echo "make_assets: $BIN not built (run make)" >&2; exit 1; }
mkdir -p "$DS" "$LOG" "$OUT"
# Run a private copy: a rebuild of the tree during the run must not swap the binary under us.
TMPBIN=$(mktemp -d)
trap 'rm -rf "$TMPBIN"' EXIT
cp "$BIN" "$TMPBIN/driple"
BIN=$TMPBIN/driple
now() { date +%s; }
# timed NAME CMD...: runs CMD and appends "NAME <wall seconds>" to the times file.
timed() {
    t_name=$1
    shift
    t_start=$(now)
    "$@"
    echo "$t_name $(($(now) - t_start))" >>"$LOG/times.txt"
}

if [ "${NOTES_ONLY:-0}" != 1 ]; then
T0=$(now)
: >"$LOG/times.txt"
ids=${ONLY:-$(sed -n 's/^ *"id": *"\([^"]*\)".*/\1/p' "$SETTINGS")}
echo "make_assets: 1/5 the sweeps (simulated) -> $DS/list.json, $DS/sweep.json" >&2
timed sweep_list "$BIN" dataset sweep --settings "$SETTINGS" --out "$DS/list.json" --generated 0 \
    --random 0 --jobs "$JOBS" --seed "$SEED" --json >"$LOG/sweep_list.json"
timed sweep_sa "$BIN" dataset sweep --settings "$SETTINGS" --out "$DS/sweep.json" \
    --zoo-batches "$SA_ZOO_BATCHES" --generated "$GEN" --gen-batches 2 --quota "$QUOTA" \
    --random "$NRANDOM" --allreduce --pytorch --jobs "$JOBS" --seed "$SEED" --json >"$LOG/sweep.json"
echo "make_assets: 2/5 the per-setting datasets -> $DS" >&2
# shellcheck disable=SC2086
all=$(printf '%s\n' $BASE $ids | awk '!seen[$0]++' | paste -sd, -)
timed extract "$BIN" dataset extract "$DS/list.json" --setting "$all" --dir "$DS" --cost-features \
    >"$LOG/extract.txt"
sed -n 's/^.*: \([0-9]*\) samples of \([^ ]*\) from.*/{"id": "\2", "samples": \1}/p' \
    "$LOG/extract.txt" | paste -sd, - | sed 's/^/{"settings": [/; s/$/]}/' >"$LOG/datasets.json"
# base DIR LOGPREFIX SPLIT [body]: the per-setting base from scratch with the cost features
# (DIR/$BASE.json), the best of 3 initialisations on the split by validation MAPE (--restarts:
# notes/accuracy.md experiments B), or (body) without them, one initialisation as before, the
# setting-aware inspector's body.
base() {
    b_name=$BASE b_opt="--cost-features --restarts 3"
    [ "${4:-}" = body ] && b_name=setting-aware-body b_opt=
    echo "make_assets: $b_name from scratch on $BASE (recipe $RECIPE, $3 split)" >&2
    # shellcheck disable=SC2086
    "$BIN" train --dataset "$DS/$BASE.json" -o "$1/$b_name.json" --recipe "$RECIPE" --split "$3" \
        --seed "$SEED" $TOPT $b_opt --json >"$2train_$b_name.json"
}
# transfers DIR LOGPREFIX SPLIT: every other list setting from DIR's base.
transfers() {
    echo "make_assets: transfer to the other settings ($3 split)" >&2
    for id in $ids; do
        [ "$id" = "$BASE" ] && continue
        [ -f "$DS/$id.json" ] || { echo "make_assets: no dataset for $id" >&2; exit 1; }
        # shellcheck disable=SC2086
        "$BIN" transfer --from "$1/$BASE.json" --dataset "$DS/$id.json" -o "$1/$id.json" \
            --recipe "$RECIPE" --split "$3" --seed "$SEED" $XOPT --json >"$2transfer_$id.json" \
            2>"$2transfer_$id.err"
        rm -f "$2transfer_$id.err"
    done
}
# sa NAME OUTFILE MEMBERS [SPLIT OPTIONS]: the setting-aware inspector on the sweep.
sa() {
    sa_name=$1 sa_file=$2 sa_members=$3
    shift 3
    echo "make_assets: the setting-aware inspector ($sa_name) -> $sa_file" >&2
    # shellcheck disable=SC2086
    "$BIN" train --sweep "$DS/sweep.json" --body "$OUT/setting-aware-body.json" -o "$sa_file" \
        --members "$sa_members" $SAOPT "$@" >"$LOG/sa_$sa_name.json" 2>"$LOG/sa_$sa_name.err"
    rm -f "$LOG/sa_$sa_name.err"
}
echo "make_assets: 3/5 the base inspector and the setting-aware body (random split) -> $OUT" >&2
timed base base "$OUT" "$LOG/" random &
p1=$!
timed sa_body base "$OUT" "$LOG/" random body &
p2=$!
rc=0
wait "$p1" || rc=$?
wait "$p2" || rc=$?
[ "$rc" = 0 ] || { echo "make_assets: a base training failed (logs in $LOG)" >&2; exit "$rc"; }
echo "make_assets: 4/5 two lanes: the setting-aware inspector; transfers and hold-outs" >&2
mkdir -p "$LOG/holdout"
lane1() {
    timed sa_random sa random "$OUT/setting-aware.json" "$SA_MEMBERS"
    [ "$HOLDOUT" = 1 ] || return 0
    timed sa_gpus sa gpus "$LOG/holdout/sa_gpus.json" "$SA_HOLD_MEMBERS" --split gpus \
        --test-held "$SA_GPUS" --val-held "$SA_VAL_GPUS"
    timed holdout_base base "$LOG/holdout" "$LOG/holdout/" models
    timed holdout_transfers transfers "$LOG/holdout" "$LOG/holdout/" models
}
lane2() {
    timed transfers transfers "$OUT" "$LOG/" random
    [ "$HOLDOUT" = 1 ] || return 0
    timed sa_families sa families "$LOG/holdout/sa_families.json" "$SA_HOLD_MEMBERS" \
        --split families
    timed sa_networks sa networks "$LOG/holdout/sa_networks.json" "$SA_HOLD_MEMBERS" \
        --split networks --test-held "$SA_NETS" --val-held "$SA_VAL_NETS"
}
# Each lane in a subshell (set -e stops it at its first failure); a lane's failure fails the run
# once both have stopped, so no step is left running.
lane1 &
p1=$!
lane2 &
p2=$!
rc=0
wait "$p1" || rc=$?
wait "$p2" || rc=$?
if [ "$rc" != 0 ]; then
    for f in "$LOG"/*.err "$LOG"/holdout/*.err; do [ -f "$f" ] && tail -n 3 "$f" >&2; done
    echo "make_assets: a step failed (logs in $LOG)" >&2
    exit "$rc"
fi
echo "total $(($(now) - T0))" >>"$LOG/times.txt"
fi

# notes/assets.md from the logs (python3 reads the JSON; without it the logs stay in $LOG).
if command -v python3 >/dev/null 2>&1; then
    python3 - "$LOG" "$BASE" "$RECIPE" "$SEED" "$GEN" "$QUOTA" "$NRANDOM" "$SA_ZOO_BATCHES" \
        "$SA_MEMBERS" "$SA_HOLD_MEMBERS" >"$NOTES" <<'EOF'
import glob, json, math, os, sys
(log, base, recipe, seed, gen, quota, n_random, sa_zoo_batches, members,
 hold_members) = sys.argv[1:]
times = dict(l.split() for l in open(os.path.join(log, "times.txt")) if len(l.split()) == 2)
names = ["gpu_mem_util.idle", "gpu_mem_util.active", "gpu_mem_util.peak", "gpu_util.idle",
         "gpu_util.active", "gpu_util.peak", "net_rx.idle", "net_rx.active", "net_rx.peak",
         "net_tx.idle", "net_tx.active", "net_tx.peak"]
groups = ["gpu_mem_util", "gpu_util", "net_rx", "net_tx"]

def load_rows(d):
    rows = []
    paths = [os.path.join(d, "train_%s.json" % base)] + sorted(glob.glob(os.path.join(d, "transfer_*.json")))
    for path in paths:
        if not os.path.exists(path):
            continue
        j = json.load(open(path))
        rows.append((j.get("setting", "?"), j.get("scratch") or j.get("transfer") or {}))
    return rows

def mean(v):
    v = [x for x in v if x is not None and math.isfinite(x)]
    return sum(v) / len(v) if v else float("nan")

def median(v):
    v = sorted(x for x in v if x is not None and math.isfinite(x))
    if not v:
        return float("nan")
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

def f(x, fmt):
    return "n/a" if x is None or not math.isfinite(x) else fmt % x

def summary(title, rows):
    print("### %s\n" % title)
    print("| setting | origin | samples (train/val/test) | seconds | epochs | val MAPE | test MAPE | "
          "test R^2 (median) | " + " | ".join("R^2 " + g for g in groups) + " |")
    print("|" + "---|" * (8 + len(groups)))
    for sid, r in rows:
        t = r.get("test") or {}
        v = r.get("val") or {}
        r2 = t.get("r2") or [None] * 12
        print("| %s | %s | %s/%s/%s | %s | %s | %s | %s | %s | %s |" % (
            sid, r.get("origin", "?"), r.get("n_train", "?"), r.get("n_val", "?"), r.get("n_test", "?"),
            f(r.get("seconds"), "%.1f"), r.get("epochs", "?"), f(mean(v.get("mape") or []), "%.1f"),
            f(mean(t.get("mape") or []), "%.1f"), f(median(r2), "%.2f"),
            " | ".join(f(median(r2[3 * k:3 * k + 3]), "%.2f") for k in range(4))))
    allm = [mean((r.get("test") or {}).get("mape") or []) for _, r in rows]
    allr = [median((r.get("test") or {}).get("r2") or []) for _, r in rows]
    print("\nOver the %d inspectors: median of the mean test MAPE %s%%, median of the median test "
          "R^2 %s.\n" % (len(rows), f(median(allm), "%.1f"), f(median(allr), "%.2f")))

def per_metric(title, rows, key, fmt):
    print("### %s\n" % title)
    print("| setting | " + " | ".join(names) + " |")
    print("|" + "---|" * (1 + len(names)))
    for sid, r in rows:
        t = (r.get("test") or {}).get(key) or [None] * 12
        print("| %s | %s |" % (sid, " | ".join(f(x, fmt) for x in t)))
    print()

def body_mape():
    path = os.path.join(log, "train_setting-aware-body.json")
    if not os.path.exists(path):
        return None
    return mean(((json.load(open(path)).get("scratch") or {}).get("test") or {}).get("mape") or [])

def sa_section():
    runs = [(k, os.path.join(log, "sa_%s.json" % k)) for k in ("random", "families", "gpus", "networks")]
    runs = [(k, json.load(open(p))) for k, p in runs if os.path.exists(p)]
    if not runs:
        return
    print("### The setting-aware inspector\n")
    print("One inspector for every setting (`inspectors/setting-aware.json`, shipped: random split "
          "of the sweep's graphs): the GNN body of %s trained without the cost features "
          "(`inspectors/setting-aware-body.json`, test MAPE %s%% on that setting's random split), "
          "and an ensemble of MLP heads reading the "
          "graph's profile and the setting, predicting the 12 metrics, the iteration time and the "
          "memory footprint with an 80%% interval (%s members). Trained again holding out whole "
          "model families, whole GPUs and whole networks (%s members each, not shipped). Test "
          "part of each split; "
          "`12 metrics` is the mean and the median of their MAPE; coverage is the share of test "
          "labels inside the 80%% interval (median over the 14 outputs).\n"
          % (base, f(body_mape(), "%.1f"), members, hold_members))
    print("| split | held out | rows (train/val/test) | seconds | 12 metrics MAPE mean / median | "
          "iteration_ms MAPE | memory_gb MAPE | coverage (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for k, j in runs:
        o = j.get("outputs") or []
        m = [x.get("mape") for x in o]
        print("| %s | %s | %s/%s/%s | %s | %s / %s | %s | %s | %s |" % (
            k, j.get("held") or "-", j.get("n_train"), j.get("n_val"), j.get("n_test"),
            f(j.get("seconds"), "%.0f"), f(j.get("test_mape_mean"), "%.1f"),
            f(j.get("test_mape_median"), "%.1f"), f(m[12] if len(m) > 12 else None, "%.1f"),
            f(m[13] if len(m) > 13 else None, "%.1f"), f(j.get("coverage_median"), "%.1f")))
    print()
    print("| output | " + " | ".join("%s MAPE / R^2 / coverage" % k for k, _ in runs) + " |")
    print("|" + "---|" * (1 + len(runs)))
    for i in range(14):
        cells = []
        for k, j in runs:
            o = (j.get("outputs") or [{}] * 14)[i]
            cells.append("%s / %s / %s" % (f(o.get("mape"), "%.1f"), f(o.get("r2"), "%.2f"),
                                           f(o.get("coverage"), "%.0f")))
        name = ((runs[0][1].get("outputs") or [{}] * 14)[i]).get("name", "?")
        print("| %s | %s |" % (name, " | ".join(cells)))
    print()

ds = json.load(open(os.path.join(log, "datasets.json")))
sweep = json.load(open(os.path.join(log, "sweep.json")))
slist = json.load(open(os.path.join(log, "sweep_list.json")))
rows = load_rows(log)
hold = load_rows(os.path.join(log, "holdout"))
print("# Shipped inspectors (`make assets`)\n")
print("Generated by `assets/make_assets.sh` (recipe `%s`, seed %s). **Every label is simulated** by "
      "driple's training simulator (notes/calibration.md), not measured on a cluster. Two sweeps "
      "(`driple dataset sweep`). The list sweep, for the per-setting inspectors: every zoo model x "
      "optimizer x 12 batch sizes in fp32 and mixed precision (%s graphs) on every list setting of "
      "its precision: %s rows (%s out of memory, left out); each list setting's rows make its "
      "dataset, up to %d jobs (`driple dataset extract`). The setting-aware sweep: every zoo model "
      "x optimizer x %s batch sizes and %s generated architectures x 2 batch sizes, in fp32 and "
      "mixed (%s graphs), each on %s random settings and on every list setting of its precision "
      "(every zoo graph, the first %s generated ones): %s rows (%s out of memory, left out). The "
      "per-setting inspectors (reading each group's FLOPs, bytes and parameter bytes beside the "
      "paper's three features) are trained on a random 60/20/20 split; the same base and transfers "
      "are trained again on a split that holds out whole model families (`--split models`: every "
      "size variant of a held-out architecture is held out with it; generated architectures "
      "always train) to measure how they predict an architecture they never saw (not shipped). "
      "The recipe and the experiments behind it: notes/accuracy.md.\n"
      % (recipe, seed, slist.get("graphs"), slist.get("rows"), slist.get("oom"),
         max(s["samples"] for s in ds["settings"]), sa_zoo_batches, gen, sweep.get("graphs"),
         n_random, quota, sweep.get("rows"), sweep.get("oom")))
def t(k):
    return times.get(k, "-")
print("Wall times on this machine (2 cores), in seconds: list sweep %s, setting-aware sweep %s, "
      "datasets %s, base (%s, from scratch) %s and the setting-aware body %s at once; then two "
      "lanes at once: the setting-aware "
      "inspector %s, holding out GPUs %s, the base and transfers holding out model families "
      "%s + %s; %d transfers %s, the setting-aware inspector holding out families %s and "
      "networks %s. Whole run: %s s.\n"
      % (t("sweep_list"), t("sweep_sa"), t("extract"), base, t("base"), t("sa_body"), t("sa_random"),
         t("sa_gpus"), t("holdout_base"), t("holdout_transfers"), len(rows) - 1, t("transfers"),
         t("sa_families"), t("sa_networks"), t("total")))
sa_section()
print("Metrics (per output, on the test part): MAPE = mean |pred - label| / |label| over labels "
      ">= 1 (ms, %, MB/s; smaller ones are immaterial and would dominate), in %; R^2 = 1 - "
      "SSE / SS about the test mean (1 perfect, 0 = predicting the mean, negative worse; n/a "
      "when the test labels are constant, e.g. a network peak at the link's capacity for every "
      "job); `val MAPE` and `test MAPE` are means over the 12 outputs; `test R^2` is the median "
      "over the 12 outputs and `R^2 <group>` the median of its idle, active and peak (R^2 is "
      "unbounded below: one output whose test labels barely vary would swamp a mean; the "
      "per-metric tables below show every value).\n")
summary("Shipped (random split)", rows)
if hold:
    summary("Holding out whole model families (not shipped)", hold)
per_metric("Shipped: test MAPE (%) per metric", rows, "mape", "%.1f")
per_metric("Shipped: test R^2 per metric", rows, "r2", "%.2f")
if hold:
    per_metric("Holding out model families: test MAPE (%) per metric", hold, "mape", "%.1f")
    per_metric("Holding out model families: test R^2 per metric", hold, "r2", "%.2f")
EOF
    echo "make_assets: wrote $NOTES" >&2
else
    echo "make_assets: python3 not found; the logs are in $LOG (notes/assets.md not written)" >&2
fi
echo "make_assets: done; inspectors in $OUT, times in $LOG/times.txt" >&2
