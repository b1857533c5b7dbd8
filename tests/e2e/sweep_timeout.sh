#!/usr/bin/env bash
# A W&B spec whose saturate section sets a per-run timeout: the hanging run is stopped at its timeout and fails
# (a timeout keeps its retries: one here, so two attempts), the other finishes, and nothing is left running.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

cat >"$WORK/sweep.yaml" <<YAML
program: $WORK/train.py
method: grid
command:
  - $PY
  - \${program}
  - \${args}
  - --seconds
  - "0.5"
metric: {name: loss, goal: minimize}
parameters:
  i: {value: 2}
  hang: {values: [0, 1]}
saturate:
  timeout: 2s
  retries: 1
  metric_pattern: 'loss=(?P<loss>[0-9.]+)'
YAML

start=$SECONDS
set +e
"$SATURATE" sweep "$WORK/sweep.yaml" --warmup 0.3s --window 0.3s >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
cat "$WORK/err" "$WORK/out"
[ "$rc" -eq 1 ] || fail "a failed run should make the sweep exit 1, got $rc"
((SECONDS - start < 20)) || fail "the timeout did not stop the hanging run in time"
expect_contains "$(cat "$WORK/err")" "timed_out (timed out after its 2 s time limit"
expect_contains "$(cat "$WORK/err")" "1 of 2 runs failed"
journal="$WORK/sweep.journal"
[ -f "$journal" ] || fail "the journal should sit beside the spec"
[ "$(journal_query "$journal" "SELECT state, attempts FROM runs ORDER BY idx")" = $'done|1\nfailed|2' ] \
  || fail "states: $(journal_query "$journal" "SELECT state, attempts FROM runs ORDER BY idx")"
[ "$(journal_query "$journal" "SELECT DISTINCT exit_class FROM attempts a JOIN runs r ON r.key = a.run_key WHERE r.idx = 1")" = timed_out ] \
  || fail "the hanging run should have timed out"
# `sweep status SPEC` finds the journal beside the spec; the finished run carries its metric.
[ "$(status_value "$WORK/sweep.journal" 'j["runs"][0]["metrics"]["loss"]')" = 0.5 ] || fail "metric from the output"
"$SATURATE" sweep status "$WORK/sweep.yaml" | grep -q "1 done, 1 failed" || fail "status by spec"
expect_no_trainer_left
echo PASS
