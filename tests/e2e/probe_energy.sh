#!/usr/bin/env bash
# What a run costs, through the NVML stand-in (tests/fake_nvml: 250 W drawn, and an energy counter that grows by
# exactly that): probe's joules per sample equal the stand-in's energy over the measured window, from the counter;
# without the counter, from power x time; with neither, n/a (never 0). --price-per-hour turns throughput into money
# per million samples and per epoch (the epoch's length from the training loader). monitor reads the counter.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
SCRIPT=("$PY" "$SATURATE_SOURCE_DIR/tests/e2e/scripts/loops.py" --steps 1000000 --step-ms 5)
export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=1

check_energy() {  # name method
  "$PY" - "$WORK/$1.json" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
full = j["stages"]["full"]
e, rate = full["energy"], full["samples_per_s"]
print(sys.argv[1], e, rate)
assert e is not None, "no energy reading"
assert e["method"] == sys.argv[2], e
assert abs(e["joules_per_sample"] / (250.0 / rate) - 1) < 0.02, (e, 250.0 / rate)
assert abs(e["samples_per_kwh"] * e["joules_per_sample"] / 3.6e6 - 1) < 1e-9
PY
}

# The three probes (the counter; power x time; neither) run at once, and are checked one by one after. Each check
# compares a probe with itself over its own window, the stand-in's power and counter are the same function of the
# clock in every process, and the loop sleeps its steps (5 ms), so the probes do not slow each other's readings. One
# after another the test took 36 s, at once 21 s (docs/benchmarks.md, suite-time5).
# One probe for the JSON and the console (what --json prints is the probe.json that --out keeps).
"$SATURATE" probe --budget 20s --price-per-hour 3.6 --what-if h100,2xa100:1.5 --out "$WORK/counter" -- "${SCRIPT[@]}" \
  >"$WORK/console.txt" 2>"$WORK/counter.err" &
counter_pid=$!
FAKE_NVML_UNSUPPORTED=energy probe_json power --budget 20s -- "${SCRIPT[@]}" &
power_pid=$!
FAKE_NVML_UNSUPPORTED=energy,power probe_json none --budget 20s -- "${SCRIPT[@]}" &
none_pid=$!
pids+=("$counter_pid" "$power_pid" "$none_pid")
wait "$counter_pid" || { cat "$WORK/counter.err" "$WORK/console.txt"; fail "saturate probe failed"; }
cp "$WORK/counter/probe.json" "$WORK/counter.json"
check_energy counter counter || fail "joules per sample should follow the stand-in's energy counter"
"$PY" - "$WORK/counter.json" <<'PY' || fail "cost per million samples and per epoch"
import json, sys
full = json.load(open(sys.argv[1]))["stages"]["full"]
c, rate = full["cost"], full["samples_per_s"]
print(c)
per_s = 3.6 / 3600
assert abs(c["per_million_samples"] - per_s / rate * 1e6) < 1e-9 * c["per_million_samples"], c
assert c["epoch_samples"] == 100000, c  # loops.py's dataset, one process
assert abs(c["per_epoch"] - 100000 / rate * per_s) < 1e-9 * c["per_epoch"], c
PY
grep -q "^energy: full .* J per sample .* from NVML's energy counter" "$WORK/console.txt" || fail "console energy line"
grep -q "^cost: full .* per million samples, .* per epoch of 100,000 samples, at 3.60 per GPU-hour" "$WORK/console.txt" ||
  fail "console cost line: $(grep '^cost' "$WORK/console.txt")"
# What-if carries a GPU's MFU to another GPU: this loop's model runs on the CPU beside the stand-in, so it says why not.
grep -q "^what-if: n/a (the model ran on the CPU: there is no GPU's MFU to carry to another GPU)" "$WORK/console.txt" ||
  fail "what-if on a CPU model: $(grep '^what-if' "$WORK/console.txt")"
expect_exit 2 "$SATURATE" probe --what-if h100,b200 -- true
expect_contains "$ERR" "--what-if 'b200': 'b200' is not a GPU saturate knows"

wait "$power_pid" || fail "the probe without the counter failed"
check_energy power "power x time" || fail "without the counter, power x time"

wait "$none_pid" || fail "the probe with neither failed"
[ "$(jq_py "$WORK/none.json" 'j["stages"]["full"]["energy"]')" = None ] || fail "no counter and no power: n/a"

expect_exit 2 "$SATURATE" probe --price-per-hour -1 -- true
expect_contains "$ERR" "--price-per-hour"

out=$("$SATURATE" monitor --query-gpu=index,total_energy_consumption --format=csv,noheader,nounits -c 2 -lms 200)
echo "$out"
"$PY" -c "
import sys
rows = [l.split(', ') for l in sys.argv[1].splitlines()]
a, b = float(rows[0][1]), float(rows[1][1])
assert 25 < b - a < 150, (a, b)  # 250 W for about 0.2 s: 50 J
" "$out" || fail "monitor's total_energy_consumption should grow by the power times the interval"
echo ok
