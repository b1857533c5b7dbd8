#!/usr/bin/env bash
# What real loops do, through probe (issue 18's checks): unmodified scripts (tests/e2e/scripts/loops.py, no import
# of saturate, no pattern) whose batches are dicts or tokenizer-like mapping objects, that accumulate gradients over
# four batches, step two optimizers per batch (a GAN), step through a closure, skip the optimizer on some batches
# (as a GradScaler does on inf), or hand the loop to a Trainer class with callbacks. For each: the three stages
# measure, a verdict is named, and the full stage is within 5% of the script's own count (its `t=... samples=...`
# lines, which saturate never reads) over the same steady window.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
LOOPS=("$PY" "$SATURATE_SOURCE_DIR/tests/e2e/scripts/loops.py" --steps 1000000 --step-ms 4 --log-every 5)

for case in dict mapping accum gan closure skip trainer; do
  probe_json "$case" --budget 30s -- "${LOOPS[@]}" --case "$case"
  expect_three_stages_and_verdict "$case"
  expect_full_near_own "$case"
done
echo "PASS in $SECONDS s"
