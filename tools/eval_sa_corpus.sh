#!/bin/sh
# eval_sa_corpus.sh: the setting-aware inspector on the ONNX corpus of real PyTorch exports
# (tests/data/onnx/corpus/, an external test set: none of these graphs is in any sweep), against
# the simulator it was trained on. For every model and setting: the simulated and the predicted
# iteration time and memory footprint, their error, and whether the simulated iteration time lies
# in the predicted 80% interval; then the median and worst error. Labels are SIMULATED.
# Usage: tools/eval_sa_corpus.sh [DRIPLE [SA_FILE]]   (environment: BATCH (32), SETTINGS: the
# setting ids, default the base setting and five more of assets/settings/default.json)
set -eu
BIN=${1:-build/driple}
SA=${2:-assets/inspectors/setting-aware.json}
BATCH=${BATCH:-32}
SETTINGS=${SETTINGS:-V100-P1w2ho-PCIe A100-P1w2ho-NVLink H100-P2w8he-IB-HDR-mixed \
T4-P1w4he-10GbE 2080Ti-P1w2he-1GbE L40S-P2w4he-25GbE-mixed}
CORPUS=tests/data/onnx/corpus
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for f in "$CORPUS"/*.onnx; do
    m=$(basename "$f" .onnx)
    for s in $SETTINGS; do
        if "$BIN" simulate "$f" --setting "$s" --batch "$BATCH" --iterations 5 --json \
                >"$TMP/sim.json" 2>/dev/null &&
            "$BIN" predict "$f" --setting "$s" --batch "$BATCH" --setting-aware "$SA" --json \
                >"$TMP/pred.json" 2>/dev/null; then
            python3 - "$m" "$s" "$TMP/sim.json" "$TMP/pred.json" <<'EOF'
import json, sys
m, s, sim, pred = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
if sim.get("oom"):
    sys.exit(0)
d, iv = pred["derived"], (pred.get("interval") or {}).get("derived", {})
it, mem = sim["iteration_ms"], sim["memory_gb"]
lo, hi = iv.get("iteration_ms", [None, None])
inside = int(lo is not None and lo <= it <= hi)
print("%s %s %.6g %.6g %.6g %.6g %d %d" % (m, s, it, d["iteration_ms"], mem, d["memory_gb"],
                                           inside, int(bool(pred.get("ood")))))
EOF
        fi
    done
done >"$TMP/rows.txt"
python3 - "$TMP/rows.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
if not rows:
    sys.exit("eval_sa_corpus: no model was both simulated and predicted")
err = lambda p, y: 100 * abs(float(p) - float(y)) / float(y)
print("| model | setting | simulated ms | predicted ms | error % | memory sim / pred GB | in 80% interval | OOD |")
print("|---|---|---|---|---|---|---|---|")
for m, s, it, pit, mem, pmem, ins, ood in rows:
    print("| %s | %s | %.4g | %.4g | %.1f | %.3g / %.3g | %s | %s |" % (
        m, s, float(it), float(pit), err(pit, it), float(mem), float(pmem),
        "yes" if ins == "1" else "no", "yes" if ood == "1" else "no"))
e = [err(r[3], r[2]) for r in rows]
em = [err(r[5], r[4]) for r in rows]
worst = max(range(len(rows)), key=lambda i: e[i])
base = [err(r[3], r[2]) for r in rows if r[1] == "V100-P1w2ho-PCIe"]
print()
print("rows %d; iteration_ms error: median %.1f%%, worst %.1f%% (%s on %s), over 40%%: %d; "
      "base setting only: median %.1f%%, worst %.1f%%; memory_gb median %.1f%%; inside the 80%% "
      "interval: %.0f%%; flagged OOD: %d" % (
          len(rows), statistics.median(e), e[worst], rows[worst][0], rows[worst][1],
          sum(x > 40 for x in e), statistics.median(base) if base else float("nan"),
          max(base) if base else float("nan"), statistics.median(em),
          100.0 * sum(r[6] == "1" for r in rows) / len(rows), sum(r[7] == "1" for r in rows)))
EOF
