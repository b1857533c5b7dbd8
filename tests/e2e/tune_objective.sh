#!/usr/bin/env bash
# `saturate tune --objective`: energy judges full and compute trials by samples per joule, read through the NVML
# stand-in (tests/fake_nvml: 250 W drawn, an energy counter that grows by exactly that), so each trial's samples
# per joule must be its throughput over 250; the decisions speak in samples/J, the ceilings in samples/s. Bad
# input (an unknown objective, cost without a price, energy with no reading at all) is refused before any trial.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

expect_exit 2 "$SATURATE" tune --objective speed -- true
expect_contains "$ERR" "--objective 'speed' is not throughput, energy or cost"
expect_exit 2 "$SATURATE" tune --objective cost -- true
expect_contains "$ERR" "--objective cost needs --price-per-hour"
# No GPU, and (where this machine's RAPL counter cannot be read) nothing else to read energy from.
if ! cat /sys/class/powercap/intel-rapl:0/energy_uj >/dev/null 2>&1; then
  expect_exit 1 env SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=0 \
    "$SATURATE" tune --budget 20s --cache "$WORK/none.db" --objective energy -- "${OOM[@]}" --limit 100
  expect_contains "$ERR" "--objective energy needs an energy reading"
fi

export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=1
tune_json energy --budget 60s --trial-budget 8s --objective energy --knob batch_size=16:64 --knob amp=off -- \
  "${OOM[@]}" --limit 100
show_decisions "$WORK/energy.json"
"$PY" - "$WORK/energy.json" <<'PY' || fail "energy scores should be the stand-in's 250 W over each trial's throughput"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["objective"] == "energy", j["objective"]
scored = 0
for t in j["trials"]:
    if t["exit_class"] not in ("stopped", "finished") or not t["samples_per_s"]:
        continue
    jps = t.get("joules_per_sample")
    assert jps is not None, ("no energy reading", t["id"])
    # The stand-in draws 250 W: joules per sample = 250 / samples per second, within 2%.
    assert abs(jps * t["samples_per_s"] / 250.0 - 1) < 0.02, (t["id"], jps, t["samples_per_s"])
    scored += 1
assert scored >= 3, scored
text = "\n".join(d["text"] for d in j["decisions"])
assert "samples/J" in text, text
assert j["recommended"] is not None, j["failure"]
PY
echo ok
