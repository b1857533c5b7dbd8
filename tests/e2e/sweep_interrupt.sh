#!/usr/bin/env bash
# SIGTERM (a batch system's time limit, `kill`; Ctrl-C's SIGINT takes the same path, tested by probe_failures,
# tune_usage and sweep_slurm) stops every run, leaves no process behind and a consistent journal with nothing
# running, and exits 143 as a process killed by SIGTERM would; --resume then finishes the sweep.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

journal="$WORK/int.journal"
sweep=("$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --grid i=1,2,3,4,5)
command=(-- "$PY" "$WORK/train.py" --i '{i}')

SWEEP_SECONDS=60 "${sweep[@]}" "${command[@]}" >"$WORK/out" 2>"$WORK/err" &
sat=$!
wait_until '[ -f "$journal" ] && [ "$(journal_query "$journal" "SELECT count(*) FROM runs WHERE state = '"'running'"'")" -ge 3 ]' 60
kill -TERM $sat
set +e
wait $sat
rc=$?
set -e
cat "$WORK/err" "$WORK/out"
[ "$rc" -eq 143 ] || fail "a sweep stopped by SIGTERM exits 143 (128 + 15), got $rc"
expect_contains "$(cat "$WORK/err")" "continue with --resume"
expect_no_trainer_left

# Consistent (status checks it and exits 1 otherwise), nothing running, nothing failed or charged.
"$SATURATE" sweep status --journal "$journal" >"$WORK/status"
[ "$(status_value "$journal" 'j["counts"]["running"]')" = 0 ] || fail "runs left running"
[ "$(status_value "$journal" 'j["counts"]["queued"]')" = 5 ] || fail "every run should be queued again"
[ "$(journal_query "$journal" "SELECT DISTINCT exit_class FROM attempts")" = stopped ] || fail "attempts not stopped"
[ "$(journal_query "$journal" "SELECT sum(failures) FROM runs")" = 0 ] || fail "an interrupt is not a failure"

SWEEP_SECONDS=0.5 "${sweep[@]}" --resume "${command[@]}" >"$WORK/out2" 2>"$WORK/err2"
expect_contains "$(cat "$WORK/out2")" "5 done, 0 failed"
echo PASS
