#!/usr/bin/env bash
# Samples per step follow the batch-size knob: a script that prints only its step times ("step 12 time 0.052"),
# whose true throughput is known (a step takes 0.02 s + 0.5 ms per sample, so larger batches are faster per
# sample), tuned with --parse and a {batch_size} placeholder and no --batch-size. Each trial's samples/s must be its
# own batch over its step time, and the recommendation must not be the smallest batch.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

STEPS="$SATURATE_SOURCE_DIR/tests/e2e/scripts/step_time.py"
PATTERN='step \d+ time (?P<step_s>[0-9.]+)'

# Without a placeholder nothing says how many samples a step holds: a clear usage error before any trial.
expect_exit 2 "$SATURATE" tune --cache "$WORK/tune.db" --parse "$PATTERN" -- "$PY" "$STEPS" --batch-size 64
expect_contains "$ERR" "put a {batch_size} placeholder in the command"

tune_json steps --budget 2m --parse "$PATTERN" --knob batch_size=16:256 -- "$PY" "$STEPS" --batch-size '{batch_size}'
R="$WORK/steps.json"
show_decisions "$R"
jq_py "$R" '"\n".join("batch %d: %.1f samples/s [%.1f, %.1f], true %.1f" % (t["knobs"]["batch_size"], t["samples_per_s"], t["ci_low"], t["ci_high"], t["knobs"]["batch_size"] / (0.02 + 0.0005 * t["knobs"]["batch_size"])) for t in j["trials"] if t["samples_per_s"] > 0)'
# Every measured trial: its own batch over its step time, within the estimator's 95% interval (or 1%, for the
# scheduler's jitter on a busy machine, when the interval is narrower).
jq_py "$R" 'all(abs(t["samples_per_s"] - b / (0.02 + 0.0005 * b)) <= max((t["ci_high"] - t["ci_low"]) / 2, 0.01 * b / (0.02 + 0.0005 * b)) for t in j["trials"] if t["samples_per_s"] > 0 for b in [t["knobs"]["batch_size"]]) or sys.exit("a trial is not its batch over its step time")'
batches=$(jq_py "$R" 'len({t["knobs"]["batch_size"] for t in j["trials"] if t["samples_per_s"] > 0})')
[ "$batches" -ge 3 ] || fail "only $batches batch sizes measured"
rec=$(jq_py "$R" 'j["recommended"]["batch_size"]')
# 256 runs at 1,730 samples/s, 128 at 1,524 and 16 at 571: a fixed samples-per-step would have made 16 look best.
[ "$rec" -ge 128 ] || fail "recommended batch $rec; the smallest batches are the slowest per sample"
expect_contains "$(jq_py "$R" 'j["recommended_command"]')" "--batch-size $rec"
echo ok
