#!/usr/bin/env bash
# Quick growth on the CPU device (packing.h rule 9) on real processes: runs that sleep through 20-ms steps slow
# nobody, so a growth step's +100% is far above noise, and the sweep reads it half a window (0.5 s of the CPU
# device's 1-s window) into the newcomer's training instead of after its warm-up and a whole window. The verdict is
# read from some 25 steps per window, whatever the machine's load (the steps sleep). Every run still runs once.
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
echo PASS
