#!/usr/bin/env bash
# A run that fails with an out-of-memory message while packed above two runs is queued again without using a
# retry (the spec allows none), its device's degree is lowered, and the run finishes on its next attempt.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

mkdir "$WORK/live"
journal="$WORK/oom.journal"
set +e
"$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --retries 0 --grid i=1,2,3,4,5,6 \
  -- "$PY" "$WORK/train.py" --i '{i}' --seconds 6 --live-dir "$WORK/live" --oom-above 2 \
  >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
cat "$WORK/err" "$WORK/out"
[ "$rc" -eq 0 ] || fail "the sweep should finish every run, exit $rc"
expect_contains "$(cat "$WORK/out")" "6 done, 0 failed"
expect_contains "$(cat "$WORK/err")" "runs on cpu: queued again, not counted as a failure"
expect_contains "$(cat "$WORK/err")" "cpu: out of memory with 3 runs: at most 2 until it empties"

# The out-of-memory attempts happened with three runs alive, and each such run then finished.
oom=$(journal_query "$journal" "SELECT run_key FROM attempts WHERE exit_class = 'gpu_oom'")
[ -n "$oom" ] || fail "no attempt ran out of memory"
for key in $oom; do
  [ "$(journal_query "$journal" "SELECT state, failures FROM runs WHERE key = '$key'")" = "done|0" ] \
    || fail "run $key did not finish cleanly after its out-of-memory attempt"
  [ "$(journal_query "$journal" "SELECT exit_class FROM attempts WHERE run_key = '$key' ORDER BY attempt_no DESC LIMIT 1")" = finished ] \
    || fail "run $key: last attempt did not finish"
done
grep -h "runs alive" "$WORK"/oom.logs/*/attempt-*/stdout.log | grep -qx "3 runs alive" || fail "the OOM was not at degree 3"
[ -z "$(ls "$WORK/live")" ] || fail "markers left: $(ls "$WORK/live")"
expect_no_trainer_left
echo PASS
