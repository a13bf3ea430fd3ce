#!/bin/sh
# make_assets.sh: the shipped inspectors, reproducibly from seeds (`make assets`).
#  1. a simulated dataset per setting of assets/settings/default.json (driple dataset build),
#     every job of the sweep that fits the GPU (GRAPHS=1368: 38 zoo models x 12 batch sizes x 3
#     optimizers, before out-of-memory jobs are dropped);
#  2. a base inspector trained from scratch on one setting (driple train --recipe driple-c,
#     notes/accuracy.md), on a random 60/20/20 split;
#  3. a transferred inspector for every other setting (driple transfer: the base's GNN body is
#     kept, only the head learns; the file stores what differs and names the base);
#  4. the same base and transfers again on a split that holds out whole model families
#     (HOLDOUT=1, the default; every size variant of an architecture stays on one side, see
#     dp_split_make): a measure of how the inspectors predict an architecture they never saw;
#     these are written under $LOG/holdout and not shipped;
#  5. notes/assets.md: validation and test error per metric and setting for both splits, and
#     the time each step took.
# Every label is SIMULATED (the PS training simulator, notes/calibration.md), not measured.
# Environment: JOBS (threads, 2), RECIPE (driple-c), EPOCHS / PATIENCE / TEPOCHS (empty: the
# recipe's), BASE (the base setting, V100-P1w2ho-PCIe), SEED (1), GRAPHS (per setting, 1368),
# HOLDOUT (1), ONLY (space-separated setting ids to transfer to; default all); DS, LOG, OUT,
# NOTES (paths); NOTES_ONLY=1 rewrites notes/assets.md from the logs of the last run.
set -eu
BIN=${1:-build/driple}
JOBS=${JOBS:-2}
RECIPE=${RECIPE:-driple-c}
EPOCHS=${EPOCHS:-}
PATIENCE=${PATIENCE:-}
TEPOCHS=${TEPOCHS:-}
BASE=${BASE:-V100-P1w2ho-PCIe}
SEED=${SEED:-1}
GRAPHS=${GRAPHS:-1368}
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

[ -x "$BIN" ] || { echo "make_assets: $BIN not built (run make)" >&2; exit 1; }
mkdir -p "$DS" "$LOG" "$OUT"
# Run a private copy: a rebuild of the tree during the run must not swap the binary under us.
TMPBIN=$(mktemp -d)
trap 'rm -rf "$TMPBIN"' EXIT
cp "$BIN" "$TMPBIN/driple"
BIN=$TMPBIN/driple
now() { date +%s; }

if [ "${NOTES_ONLY:-0}" != 1 ]; then
echo "make_assets: 1/4 datasets (simulated) -> $DS" >&2
t0=$(now)
"$BIN" dataset build --settings "$SETTINGS" --out "$DS" --graphs "$GRAPHS" --jobs "$JOBS" \
    --seed "$SEED" --json >"$LOG/datasets.json"
t1=$(now)

ids=${ONLY:-$(sed -n 's/^ *"id": *"\([^"]*\)".*/\1/p' "$SETTINGS")}
# base_and_transfers SPLIT OUTDIR LOGPREFIX
base_and_transfers() {
    echo "make_assets: base inspector $BASE from scratch (recipe $RECIPE, $1 split)" >&2
    # shellcheck disable=SC2086
    "$BIN" train --dataset "$DS/$BASE.json" -o "$2/$BASE.json" --recipe "$RECIPE" --split "$1" \
        --seed "$SEED" $TOPT --json >"$3train_$BASE.json"
    echo "make_assets: transfer to the other settings ($1 split)" >&2
    for id in $ids; do
        [ "$id" = "$BASE" ] && continue
        [ -f "$DS/$id.json" ] || { echo "make_assets: no dataset for $id" >&2; exit 1; }
        # shellcheck disable=SC2086
        "$BIN" transfer --from "$2/$BASE.json" --dataset "$DS/$id.json" -o "$2/$id.json" \
            --recipe "$RECIPE" --split "$1" --seed "$SEED" $XOPT --json >"$3transfer_$id.json"
        echo "  $id" >&2
    done
}
echo "make_assets: 2/4 base and transfers (random split) -> $OUT" >&2
base_and_transfers random "$OUT" "$LOG/"
t2=$(now)
t3=$t2
if [ "$HOLDOUT" = 1 ]; then
    echo "make_assets: 3/4 the same holding out whole model families -> $LOG/holdout (not shipped)" >&2
    mkdir -p "$LOG/holdout"
    base_and_transfers models "$LOG/holdout" "$LOG/holdout/"
    t3=$(now)
fi
echo "$t0 $t1 $t2 $t3" >"$LOG/times.txt"
fi
read t0 t1 t2 t3 <"$LOG/times.txt"

# notes/assets.md from the logs (python3 reads the JSON; without it the logs stay in $LOG).
if command -v python3 >/dev/null 2>&1; then
    python3 - "$LOG" "$BASE" "$((t1 - t0))" "$((t2 - t1))" "$((t3 - t2))" "$RECIPE" \
        "$SEED" "$GRAPHS" >"$NOTES" <<'EOF'
import glob, json, math, os, sys
log, base, t_ds, t_main, t_hold, recipe, seed, graphs = sys.argv[1:]
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

ds = json.load(open(os.path.join(log, "datasets.json")))
rows = load_rows(log)
hold = load_rows(os.path.join(log, "holdout"))
print("# Shipped inspectors (`make assets`)\n")
print("Generated by `assets/make_assets.sh` (recipe `%s`, seed %s). **Every label is simulated** by "
      "driple's PS training simulator (notes/calibration.md), not measured on a cluster. Datasets: "
      "up to %d jobs per setting (%s asked: every job of the sweep; jobs that do not fit a GPU's "
      "memory are left out), zoo models x batch sizes x optimizers. The shipped inspectors are "
      "trained on a random 60/20/20 split; the same base and transfers are trained again on a "
      "split that holds out whole model families (`--split models`: every size variant of a "
      "held-out architecture is held out with it, and the base and every transfer hold out the "
      "same families) to measure how they predict an architecture they never saw (not shipped). "
      "The recipe and the experiments behind it: notes/accuracy.md.\n"
      % (recipe, seed, max(s["samples"] for s in ds["settings"]), graphs))
print("Times on this machine (2 shared cores): datasets %s s; base (%s, from scratch) and %d "
      "transfers, random split: %s s; the same holding out model families: %s s.\n"
      % (t_ds, base, len(rows) - 1, t_main, t_hold))
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
echo "make_assets: done in $((t3 - t0)) s; inspectors in $OUT" >&2
