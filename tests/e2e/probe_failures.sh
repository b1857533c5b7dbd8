#!/usr/bin/env bash
# Failures are reported, not hidden: an out-of-memory run is classified as such (exit 1, probe.json says so);
# bad input gets exit 2 naming the problem; Ctrl-C (SIGINT to saturate) leaves no process of the tree alive.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

# Out of memory: the stand-in script raises PyTorch's CUDA OOM error above batch 96.
# Without --out the logs of a failed run stay in a temporary folder that stderr names.
mkdir -p "$WORK/tmp-oom"
set +e
TMPDIR="$WORK/tmp-oom" "$SATURATE" probe --json --budget 30s -- "$PY" "$SATURATE_SOURCE_DIR/examples/oom_at_batch.py" \
  --batch-size 128 >"$WORK/oom.json" 2>"$WORK/oom.err"
rc=$?
set -e
cat "$WORK/oom.err"
[ "$rc" -eq 1 ] || fail "an OOM run should exit 1, got $rc"
[ "$(jq_py "$WORK/oom.json" 'j["stages"]["full"]["outcome"]["class"]')" = gpu_oom ] || fail "OOM not classified"
[ "$(jq_py "$WORK/oom.json" 'j["verdict"]["failed"]')" = True ] || fail "verdict should say failed"
expect_contains "$(cat "$WORK/oom.err")" "out of GPU memory"
kept=$(ls -d "$WORK"/tmp-oom/saturate-probe-*)
expect_contains "$(cat "$WORK/oom.err")" "its logs are kept in $kept"
[ -s "$kept/full/stderr.log" ] || fail "the kept folder should hold the full stage's logs"
[ -z "$(ls "$WORK/tmp-oom" | grep -v '^saturate-probe-')" ] || fail "left in TMPDIR: $(ls "$WORK/tmp-oom")"

# A probe that did not fail leaves no folder behind.
mkdir -p "$WORK/tmp-ok"
TMPDIR="$WORK/tmp-ok" "$SATURATE" probe --budget 20s -- true >/dev/null 2>&1
[ -z "$(ls -A "$WORK/tmp-ok")" ] || fail "a probe left in TMPDIR: $(ls -A "$WORK/tmp-ok")"

# Bad input.
expect_exit 2 "$SATURATE" probe --budget 2x -- true
expect_contains "$ERR" "2x"
expect_exit 2 "$SATURATE" probe --parse '(?P<samples_per_s>[0-9.]+' -- true
expect_contains "$ERR" "missing closing parenthesis"
expect_exit 2 "$SATURATE" probe --parse '(?P<step_s>[0-9.]+)' -- true
expect_contains "$ERR" "batch size"
expect_exit 2 "$SATURATE" probe
expect_contains "$ERR" "after --"

# Ctrl-C: saturate stops the run (SIGINT, SIGTERM, SIGKILL) and no process of the tree survives.
descendants() {
  local kids
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  for k in $kids; do echo "$k"; descendants "$k"; done
}
mkdir -p "$WORK/tmp-int"
TMPDIR="$WORK/tmp-int" "$SATURATE" probe --budget 5m --out "$WORK/int" -- "${TRAIN[@]}" --model tiny --workers 2 \
  >"$WORK/int.txt" 2>&1 &
sat=$!
# Wait for the trainer and its two DataLoader workers to exist, and remember them.
tree=""
for _ in $(seq 1 120); do
  tree=$(descendants $sat)
  [ "$(echo "$tree" | grep -c .)" -ge 3 ] && break
  sleep 0.5
done
[ "$(echo "$tree" | grep -c .)" -ge 3 ] || fail "the trainer and its workers never started: '$tree'"
kill -INT $sat
set +e
wait $sat
rc=$?
set -e
cat "$WORK/int.txt"
[ "$rc" -eq 130 ] || fail "an interrupted probe should exit 130, got $rc"
sleep 0.5
for pid in $tree; do
  if kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" != Z ]; then
    ps -o pid,ppid,stat,args -p "$pid"
    fail "process $pid of the probed tree survived the interrupt"
  fi
done
# Nor any temporary folder of its DataLoader workers (pymp-*) or of the run.
[ -z "$(ls -A "$WORK/tmp-int")" ] || fail "the interrupted probe left in TMPDIR: $(ls -A "$WORK/tmp-int")"
echo ok
