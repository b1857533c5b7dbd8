#!/usr/bin/env bash
# What real loops do, through probe (issue 18's checks): unmodified scripts (tests/e2e/scripts/loops.py, no import
# of saturate, no pattern) whose batches are tokenizer-like mapping objects, or that accumulate gradients over four
# batches. For each: the three stages measure, a verdict is named, and the full stage is within 5% of the script's
# own count (its `t=... samples=...` lines, which saturate never reads) over the same steady window.
# The other shapes (dict batches, two optimizers per batch, a closure, skipped optimizer steps, a Trainer class) and
# these two are checked without probe by tests/python/test_launch.py: exact step and sample counts against the
# script's own totals, and a loader stage and a compute stage that run and count on each.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
LOOPS=("$PY" "$SATURATE_SOURCE_DIR/tests/e2e/scripts/loops.py" --steps 1000000 --step-ms 4 --log-every 5)

# The two probes run at once and are checked after: every check reads one probe against its own run's count over its
# own window, and the loops sleep their steps (4 ms), so neither probe's figures rest on the other's absence. One
# after the other they were nearly all of this test's ~32 s (docs/benchmarks.md, suite-time5).
cases=(mapping accum)
probe_pids=()
for case in "${cases[@]}"; do
  probe_json "$case" --budget 30s -- "${LOOPS[@]}" --case "$case" &
  probe_pids+=($!)
done
pids+=("${probe_pids[@]}")
for i in "${!cases[@]}"; do
  wait "${probe_pids[i]}" || fail "${cases[i]}: saturate probe failed"
done
for case in "${cases[@]}"; do
  expect_three_stages_and_verdict "$case"
  expect_full_near_own "$case"
done
echo "PASS in $SECONDS s"
