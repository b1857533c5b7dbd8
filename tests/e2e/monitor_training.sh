#!/usr/bin/env bash
# `saturate monitor -- CMD` shows the command's training throughput: the command reports its steps over the
# helper channel (here through `import saturate`; the automatic PyTorch instrumentation sends the same fields),
# and proc.samples_per_s / proc.steps_per_s / proc.data_wait read the rates of each sampling interval. A command
# that reports nothing reads null (N/A), never 0.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

# 8 samples per step, 20 ms per step with a quarter of it waiting for the "loader": about 400 samples/s.
train=$'import saturate, time\ndef batches():\n    for _ in range(80):\n        time.sleep(0.005)\n        yield [0] * 8\nfor b in saturate.track(batches()):\n    time.sleep(0.015)\n'

# Whole samples as JSON lines, no query.
out=$("$SATURATE" monitor --json -lms 250 -- "$PY" -c "$train" 2>"$WORK/stderr")
echo "$out"
"$PY" - "$out" <<'PY'
import json, sys
trees = [json.loads(line)["tree"] for line in sys.argv[1].strip().splitlines()]
assert len(trees) >= 4, f"only {len(trees)} samples"
rates = [t["samples_per_s"] for t in trees if t["samples_per_s"] is not None]
assert rates, "no sample carries samples_per_s"
best = max(rates)
assert 250 < best < 450, f"samples_per_s {best}, expected about 400"
steps = [t["steps_per_s"] for t in trees if t["steps_per_s"] is not None]
assert 30 < max(steps) < 57, f"steps_per_s {max(steps)}, expected about 50"
waits = [t["data_wait_share"] for t in trees if t["data_wait_share"] is not None]
assert waits and all(0.1 < w < 0.6 for w in waits), f"data_wait_share {waits}, expected about 0.25"
# Before the first report the fields are null, not 0.
assert trees[0]["samples_per_s"] is None, trees[0]
print("ok: samples_per_s up to", round(best), "over", len(trees), "samples")
PY

# The query fields, with units in the CSV header.
out=$("$SATURATE" monitor --query-host=proc.samples_per_s,proc.steps_per_s,proc.data_wait --format=csv -lms 250 \
  -- "$PY" -c "$train" 2>"$WORK/stderr")
echo "$out"
expect_contains "$(echo "$out" | head -n1)" "proc.samples_per_s, proc.steps_per_s, proc.data_wait [%]"
"$PY" - "$out" <<'PY'
import sys
rows = [r.split(", ") for r in sys.argv[1].strip().splitlines()[1:]]
values = [float(r[0]) for r in rows if r[0] != "[N/A]"]
assert values and max(values) > 250, rows
assert any(r[2].endswith(" %") for r in rows), rows
PY

# A command that reports nothing: N/A throughout.
out=$("$SATURATE" monitor --query-host=proc.samples_per_s,proc.data_wait --format=csv,noheader -lms 100 -- sleep 0.5 2>"$WORK/stderr")
echo "$out"
[ -n "$out" ] || fail "no samples"
[ -z "$(echo "$out" | grep -v '^\[N/A\], \[N/A\]$' || true)" ] || fail "a silent command must read N/A: $out"

# --no-auto reaches the command's environment, and makes no sense without one. No -c: monitor stops the command
# after its last sample, and a busy machine can take longer than one sample's 0.2 s to start Python.
out=$("$SATURATE" monitor --no-auto --query-host=proc.count --format=csv,noheader -lms 100 -- "$PY" -c \
  'import os; print("auto=" + os.environ.get("SATURATE_AUTO", "unset"), flush=True)' 2>&1)
expect_contains "$out" "auto=0"
expect_exit 2 "$SATURATE" monitor --no-auto --query-host=cpu.util -c 1
expect_contains "$ERR" "--no-auto applies to a command started after --"
echo "ok"
