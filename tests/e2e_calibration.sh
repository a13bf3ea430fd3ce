#!/bin/sh
# e2e_calibration.sh: the README's calibration figures stay true. `driple calibrate --json`
# simulates all 834 published rows of ../shared/calibration (throughput_measured.csv and
# throughput_published.csv) with the built-in constants and leaves each GPU out in turn
# (refits the constants without its rows, predicts them). Checked: every row gets a finite
# positive prediction, every published run fits its GPU in the simulated memory footprint (it
# ran), the figures stay within README's (a change that moves them must update README.md and
# notes/calibration.md), and `driple simulate` answers every published configuration it is
# given (a spread of rows) with the throughput calibrate predicts.
. tests/lib.sh
[ -r ../shared/calibration/throughput_published.csv ] || { echo "e2e_calibration.sh: no ../shared/calibration; skipped"; finish; exit; }
ok "$DRIPLE" calibrate --json
cp "$TMP/out" "$TMP/cal.json"
python3 - "$TMP/cal.json" <<'PY' && pass || fail "calibration figures or rows"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["n"] == 834 and len(d["rows"]) == 834, d["n"]
assert d["oom_rows"] == 0, [ (r["model"], r["catalog"], r["batch"], r["memory_gb"]) for r in d["rows"] if r["oom"] ][:5]
for r in d["rows"]:
    assert r["predicted"] > 0 and math.isfinite(r["predicted"]), r
    assert r["predicted_logo"] > 0 and math.isfinite(r["predicted_logo"]), r
    assert r["memory_gb"] <= r["gpu_memory_gb"], r
# README's figures (notes/calibration.md): all rows and leave-one-GPU-out
a, l = d["all"], d["logo"]
limits = [("all median", a["median_abs_error_pct"], 14.5), ("all p90", a["p90_abs_error_pct"], 45.0),
          ("LOGO median", l["median_abs_error_pct"], 18.0), ("LOGO p90", l["p90_abs_error_pct"], 50.0)]
bad = [(k, v, m) for k, v, m in limits if not v <= m]
assert not bad, bad
assert d["one_gpu"]["all"]["n"] + d["multi_gpu"]["all"]["n"] == 834
PY
# the same configurations through `driple simulate` (every 40th row: all models, GPUs,
# frameworks, syncs and precisions turn up)
python3 - "$TMP/cal.json" >"$TMP/cmds" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i, r in enumerate(d["rows"]):
    if i % 40: continue
    ps = "--sync ps --ps 1" if r["sync"] == "ps" else "--sync allreduce"
    want = r["predicted"] / (r["tokens_per_sample"] or 1)
    print(f'{want}\tzoo:{r["zoo"]}|--gpu|{r["gpu"]}|--workers|{r["gpus"]}|{ps.replace(" ", "|")}|--network|{r["network"]}|--framework|{r["framework"]}|--precision|{r["precision"]}|--batch|{r["batch"]}|--optimizer|{r["optimizer"]}|--json')
PY
n=0
tab=$(printf '\t')
while IFS=$tab read -r want args; do
    n=$((n + 1))
    old=$IFS; IFS='|'; set -- $args; IFS=$old
    if "$DRIPLE" simulate "$@" >"$TMP/sim.json" 2>"$TMP/err"; then
        python3 -c "import json,sys; t=json.load(open('$TMP/sim.json'))['throughput']; w=float('$want'); sys.exit(0 if abs(t/w-1) < 0.03 else 1)" \
            && pass || fail "simulate $args: throughput differs from calibrate's $want: $(head -c 300 "$TMP/sim.json")"
    else
        fail "simulate $args: $(head -c 300 "$TMP/err")"
    fi
done <"$TMP/cmds"
[ "$n" -ge 20 ] && pass || fail "only $n rows tried"
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
contains "$TMP/out" "memory: 834 of 834 rows fit"
finish
