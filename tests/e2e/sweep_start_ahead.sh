#!/usr/bin/env bash
# Start-ups ahead of a check (packing.h rule 12) on real processes, on one GPU of the NVML stand-in: each run spends
# 4 s starting up (as Python, torch and a CUDA context do; it says at once that steps will come) before its first
# training step, then trains 12 s. Under --warmup 2s --window 2s the first run is measured 4 s after its first step;
# the second run starts about a second after that step, not 4 s after, its start-up overlapping the measurement,
# and degree 2 is then proven. Every run ends once.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=1

# Writes the wall time of its start and of its first step to start.I and step.I beside itself.
cat >"$WORK/slow_start.py" <<'PY'
import os, sys, time
import saturate  # the helper's hello: steps will come

def note(what):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{what}.{sys.argv[1]}"), "w") as f:
        f.write(repr(time.time()))

note("start")
time.sleep(4)  # the start-up: nothing trains yet
for step in saturate.track(range(240)):
    if step == 0:
        note("step")
    time.sleep(0.05)
PY

journal="$WORK/ahead.journal"
"$SATURATE" sweep --journal "$journal" --warmup 2s --window 2s --grid i=1,2,3 \
  -- "$PY" "$WORK/slow_start.py" '{i}' >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; fail "the sweep failed"; }
expect_contains "$(cat "$WORK/out")" "3 done, 0 failed"
expect_each_finished_once "$journal" 3
expect_contains "$(cat "$WORK/err")" "1 run started ahead"
# Degree 2 proven: by its gain check, or first from the runs' own progress (rule 10).
grep -qE "degree 2 (raised the progress rate|trained \+[0-9]+% faster)" "$WORK/err" || { cat "$WORK/err"; fail "degree 2 was not proven"; }
# The second run started after the first one's first step, and well before that run could be measured (2-s warm-up
# and 2-s window after it): without rule 12 it would start 4 s after that step at the earliest.
"$PY" - "$WORK" <<'PY' || { cat "$WORK/err"; fail "the second run did not start ahead"; }
import sys
w = sys.argv[1]
step1 = float(open(f"{w}/step.1").read())
start2 = float(open(f"{w}/start.2").read())
print(f"second run started {start2 - step1:.2f} s after the first run's first step")
assert 0 <= start2 - step1 < 3.0, start2 - step1
PY
