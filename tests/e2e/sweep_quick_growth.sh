#!/usr/bin/env bash
# Quick growth on the CPU device (packing.h rule 9) on real processes: runs that sleep through 20-ms steps slow
# nobody, so a growth step's +100% is far above noise, and the sweep reads it half a window (0.5 s of the CPU
# device's 1-s window) into the newcomer's training instead of after its warm-up and a whole window. The verdict is
# read from some 25 steps per window, whatever the machine's load (the steps sleep). Every run still runs once.
# Then a sweep of short runs, whose degrees are read from the device's own progress (rule 10).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

"$SATURATE" sweep --fresh --cpu --journal "$WORK/q.journal" --grid i=1,2,3,4,5,6 \
  -- "$PY" "$WORK/train.py" --i '{i}' --seconds 4 --step 0.02 >"$WORK/q.out" 2>"$WORK/q.err" ||
  { cat "$WORK/q.err"; fail "the sweep failed"; }
cat "$WORK/q.err" "$WORK/q.out"
expect_contains "$(cat "$WORK/q.out")" "6 done, 0 failed"
expect_contains "$(cat "$WORK/q.err")" "cpu: degree 2 raised the progress rate by +"
expect_contains "$(cat "$WORK/q.err")" "read early (over 0.5 s); the next step tries 2 more at once"
expect_each_finished_once "$WORK/q.journal" 6

# Runs of 1.5-2.5 s (packing.h rule 10): a run leaves during nearly every gain check, cutting it short, yet the
# device's own progress between the comings and goings proves the degrees that pay (+100% each: the steps sleep).
"$SATURATE" sweep --fresh --cpu --journal "$WORK/s.journal" --grid i=1,2,3,4,5,6 --grid s=1.5,2,2.5 \
  -- "$PY" "$WORK/train.py" --i '{i}' --seconds '{s}' --step 0.02 >"$WORK/s.out" 2>"$WORK/s.err" ||
  { cat "$WORK/s.err"; fail "the sweep of short runs failed"; }
cat "$WORK/s.err" "$WORK/s.out"
expect_contains "$(cat "$WORK/s.out")" "18 done, 0 failed"
expect_contains "$(cat "$WORK/s.err")" "read from the runs' own progress as they came and went"
expect_each_finished_once "$WORK/s.journal" 18
echo PASS
