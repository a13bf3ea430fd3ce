#!/bin/sh
# e2e_calibration.sh: the README's calibration figures stay true. `driple calibrate --json`
# simulates the published rows of ../shared/calibration (throughput_measured.csv and
# throughput_published.csv: 834 rows; throughput_dle_v100.csv: the 102 of its 189 whose model
# the zoo has, the rest counted as skipped) with the built-in constants and leaves each GPU,
# each GPU generation and each system out in turn (refits the constants without its rows,
# predicts them). Checked: every row gets a finite positive prediction, every published run of
# the first two tables fits its GPU in the simulated memory footprint (it ran), the figures
# stay within notes/calibration.md's (a change that moves them must update it), and `driple
# simulate` answers every published configuration of those tables it is given (a spread of
# rows) with the throughput calibrate predicts.
. tests/lib.sh
[ -r ../shared/calibration/throughput_published.csv ] || { echo "e2e_calibration.sh: no ../shared/calibration; skipped"; finish; exit; }
ok "$DRIPLE" calibrate --json
cp "$TMP/out" "$TMP/cal.json"
python3 - "$TMP/cal.json" <<'PY' && pass || fail "calibration figures or rows"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["n"] == 936 and len(d["rows"]) == 936, d["n"]
assert d["skipped_rows"] == 87, d["skipped_rows"]
old = [r for r in d["rows"] if "dle_v100" not in r["file"]]
assert len(old) == 834
assert not any(r["oom"] for r in old), [(r["model"], r["catalog"], r["batch"], r["memory_gb"]) for r in old if r["oom"]][:5]
for r in d["rows"]:
    assert r["predicted"] > 0 and math.isfinite(r["predicted"]), r
    assert r["predicted_logo"] > 0 and math.isfinite(r["predicted_logo"]), r
for r in old:
    assert r["memory_gb"] <= r["gpu_memory_gb"], r
    # Lambda's Transformer-XL runs: one independent run per GPU (no gradient exchanged)
    assert r["replicas"] == (r["gpus"] if r["model"] == "transformerxlbase" else 1), r
# Lambda's 2020 RTX 2080 Ti BERT-large "FP16" rows on 2 to 8 GPUs ran on one GPU in fp32 (their
# logs) and are simulated so; no other row is
ran = [r for r in d["rows"] if r["ran_fp32"]]
assert len(ran) == 6, len(ran)
assert all(r["model"] == "bert_large_squad" and r["catalog"] == "RTX2080Ti" and r["gpus"] == 1
           and r["precision"] == "fp32" and r["batch"] == 2 for r in ran), ran
# Lambda's TensorFlow runs with XLA auto-clustering (their log directories: *_XLA* and
# 7502-A100-PCIE-40GB, whose every log prints XLA's mark_for_compilation_pass warning) are
# simulated with it: RTX 2080 Ti 84 rows, A100 PCIe 40 GB 48, RTX 3080 24, V100-SXM2 2; no other
xla = {}
for r in old:
    if r["xla"]:
        assert r["framework"] == "tensorflow", r
        xla[r["catalog"]] = xla.get(r["catalog"], 0) + 1
assert xla == {"RTX2080Ti": 84, "A100-PCIe-40GB": 48, "RTX3080": 24, "V100-SXM2-16GB": 2}, xla
# The figures (notes/calibration.md): over the old tables' rows leave-one-GPU-out within issue
# 11's targets (10.60% / 29.59% after step 17), recomputed here from the rows; over all rows
# and DeepLearningExamples' the figures reached now (issue 28's targets, median 12% / p90 30%,
# are not: see notes/calibration.md), so that a change can only improve them
def stat(rows, key):
    e = sorted(abs(r[key] / r["measured"] - 1) * 100 for r in rows)
    q = lambda p: e[int(math.floor(p * (len(e) - 1)))] + (p * (len(e) - 1) % 1) * (e[min(len(e) - 1, int(math.floor(p * (len(e) - 1))) + 1)] - e[int(math.floor(p * (len(e) - 1)))])
    return q(0.5), q(0.9)
om, op = stat(old, "predicted_logo")
dle = [r for r in d["rows"] if "dle_v100" in r["file"]]
limits = [("old rows all median", stat(old, "predicted")[0], 10.5),
          ("old rows all p90", stat(old, "predicted")[1], 32.5),
          ("old rows LOGO median", om, 12.0),
          # 29.59% before the DLE rows joined the fit; 30.96% with them (notes/calibration.md)
          ("old rows LOGO p90", op, 31.5),
          ("all LOGO median", d["logo"]["median_abs_error_pct"], 13.0),
          ("DLE LOGO median", d["dle"]["logo"]["median_abs_error_pct"], 19.0)]
bad = [(k, v, m) for k, v, m in limits if not v <= m]
assert not bad, bad
assert d["one_gpu"]["all"]["n"] + d["multi_gpu"]["all"]["n"] == 936
PY
# the same configurations through `driple simulate`. Not every row: the 834 rows are 680
# distinct configurations, and a `driple simulate` process takes about 45 ms of CPU (building
# the zoo graph is most of it), 30 s for all of them, so a spread of them is run: every
# seventh distinct configuration in the tables' order, and the first of a model or GPU the
# stride missed (about 120, 7 s of CPU; every model, GPU, framework, sync, precision and GPU
# count turns up), two at a time, checked in one pass.
python3 - "$TMP/cal.json" >"$TMP/cmds" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seen, models, gpus = {}, set(), set()
for r in d["rows"]:
    if "dle_v100" in r["file"]: continue  # accumulation, DALI and systems: calibrate's only
    ps = "--sync ps --ps 1" if r["sync"] == "ps" else "--sync allreduce"
    # a row of independent runs is one of them simulated, times their count
    workers = r["gpus"] // r["replicas"]
    args = (f'zoo:{r["zoo"]}|--gpu|{r["gpu"]}|--workers|{workers}|{ps.replace(" ", "|")}'
            f'|--network|{r["network"]}|--framework|{r["framework"]}'
            f'|--precision|{r["precision"]}|--batch|{r["batch"]}|--optimizer|{r["optimizer"]}'
            + ('|--xla' if r["xla"] else '') + '|--json')
    if args in seen: continue
    seen[args] = r["predicted"] / r["replicas"] / (r["tokens_per_sample"] or 1)
    if (len(seen) - 1) % 7 == 0 or r["model"] not in models or r["catalog"] not in gpus:
        models.add(r["model"])
        gpus.add(r["catalog"])
        print(f"{len(seen) - 1}\t{seen[args]}\t{args}")
PY
n=$(wc -l <"$TMP/cmds")
tab=$(printf '\t')
# lane L of 2 simulates the lines L, L + 2, ...: out/ID.json, or out/ID.err when it failed
lane() {
    awk -v l="$1" 'NR % 2 == l' "$TMP/cmds" | while IFS=$tab read -r id want args; do
        old=$IFS; IFS='|'; set -- $args; IFS=$old
        "$DRIPLE" simulate "$@" >"$TMP/sims/$id.json" 2>"$TMP/sims/$id.err" || echo >>"$TMP/sims/$id.err"
    done
}
mkdir "$TMP/sims"
lane 0 & lane 1; wait
python3 - "$TMP/cmds" "$TMP/sims" <<'PY' && pass || fail "driple simulate disagrees with calibrate"
import json, os, sys
bad = []
for line in open(sys.argv[1]):
    i, want, args = line.rstrip("\n").split("\t")
    base = os.path.join(sys.argv[2], i)
    if os.path.getsize(base + ".err"):
        bad.append((args, open(base + ".err").read()[:300]))
        continue
    t = json.load(open(base + ".json"))["throughput"]
    if not abs(t / float(want) - 1) < 0.03: bad.append((args, t, want))
assert not bad, bad[:5]
PY
[ "$n" -ge 90 ] && pass || fail "only $n configurations tried"
# bad tables fail naming file and place
fails 1 "nope.csv: cannot open: No such file" "$DRIPLE" calibrate --data "$TMP/nope.csv"
printf 'a,b\n1,2\n' >"$TMP/one.csv"
fails 1 "one.csv:1: no column \"model\"" "$DRIPLE" calibrate --data "$TMP/one.csv"
head -1 ../shared/calibration/throughput_published.csv >"$TMP/bad.csv"
sed -n 2p ../shared/calibration/throughput_published.csv | sed 's/RTX3080/RTX9999/' >>"$TMP/bad.csv"
fails 1 "bad.csv:2: GPU \"RTX9999\" is not in" "$DRIPLE" calibrate --data "$TMP/bad.csv" --no-logo
head -1 ../shared/calibration/throughput_published.csv >"$TMP/bad2.csv"
sed -n 2p ../shared/calibration/throughput_published.csv | sed 's/,5665,/,-3,/' >>"$TMP/bad2.csv"
fails 1 "bad2.csv:2: bad num_gpus" "$DRIPLE" calibrate --data "$TMP/bad2.csv" --no-logo
ok "$DRIPLE" calibrate --no-logo
# the old tables' 834 rows all fit; 4 of DeepLearningExamples' rows that ran are simulated out
# of memory (notes/calibration.md: not yet explained)
contains "$TMP/out" "memory: 932 of 936 rows fit"
finish
