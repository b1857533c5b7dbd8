#!/usr/bin/env bash
# Children that misbehave, and a controller left to run unattended: a 100 MB line without a break, a child that
# closes its stdout and keeps running, one that never prints, fork failing (EAGAIN, as under RLIMIT_NPROC), and
# `nohup saturate sweep ... &` through a SIGHUP. Each sweep ends normally with every run done.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

cat >"$WORK/odd.py" <<'PY'
import os, sys, time
kind = sys.argv[1]
if kind == "long-line":
    chunk = "x" * (1 << 20)
    for _ in range(100):
        sys.stdout.write(chunk)
    sys.stdout.write(" loss=0.5\n")
elif kind == "closed-stdout":
    os.close(1)
    time.sleep(2)
    print("loss=0.25", file=sys.stderr)
elif kind == "silent":
    time.sleep(2)
PY

# All three kinds in one sweep, with the metric read from their output lines (stdout and stderr).
journal="$WORK/odd.journal"
start=$SECONDS
"$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --metric loss \
  --metric-pattern 'loss=(?P<loss>[0-9.]+)' --grid kind=long-line,closed-stdout,silent \
  -- "$PY" "$WORK/odd.py" '{kind}' >"$WORK/odd.out" 2>"$WORK/odd.err" || fail "sweep: $(cat "$WORK/odd.err")"
cat "$WORK/odd.out"
expect_contains "$(cat "$WORK/odd.out")" "3 done, 0 failed"
((SECONDS - start < 60)) || fail "the sweep took $((SECONDS - start)) s: a child with a closed stdout held it up"
losses=$(journal_query "$journal" "SELECT best_metrics_json FROM runs ORDER BY idx")
expect_contains "$losses" '"loss":0.5'
expect_contains "$losses" '"loss":0.25'

# fork() fails with EAGAIN for saturate's first start (an LD_PRELOAD shim, tests/fault_shims): the attempt ends
# start_failed, marked transient, and the run is retried instead of failing for good.
: "${FAIL_FORK:?run through ctest}"
journal="$WORK/fork.journal"
SWEEP_SECONDS=0.5 LD_PRELOAD="$FAIL_FORK" FAIL_FORK_COUNT=1 "$SATURATE" sweep --journal "$journal" --warmup 0.3s \
  --window 0.3s --grid i=1,2 -- "$PY" "$WORK/train.py" --i '{i}' >"$WORK/fork.out" 2>"$WORK/fork.err" \
  || fail "a sweep whose first fork failed: $(cat "$WORK/fork.err")"
cat "$WORK/fork.err"
expect_contains "$(cat "$WORK/fork.out")" "2 done, 0 failed"
expect_contains "$(cat "$WORK/fork.err")" "Resource temporarily unavailable"
[ "$(journal_query "$journal" "SELECT count(*) FROM attempts WHERE exit_class = 'start_failed'")" = 1 ] \
  || fail "expected one start_failed attempt: $(journal_query "$journal" "SELECT run_key, exit_class FROM attempts")"
expect_each_finished_once "$journal" 2

# Four forks failing in a row with no retries allowed: transient start failures have a bound of their own (they
# are not the command's fault) and each waits longer than the one before (0.25 s doubled, times 0.5-1.5 jitter),
# instead of burning attempts in a fraction of a second.
journal="$WORK/forks.journal"
SWEEP_SECONDS=0.5 LD_PRELOAD="$FAIL_FORK" FAIL_FORK_COUNT=4 "$SATURATE" sweep --journal "$journal" --retries 0 \
  --warmup 0.3s --window 0.3s --grid i=1 -- "$PY" "$WORK/train.py" --i '{i}' >"$WORK/forks.out" 2>"$WORK/forks.err" \
  || fail "a sweep whose first four forks failed: $(cat "$WORK/forks.err")"
expect_contains "$(cat "$WORK/forks.out")" "1 done, 0 failed"
expect_contains "$(cat "$WORK/forks.err")" "not counted against its retries"
starts=$(journal_query "$journal" "SELECT started_unix FROM attempts ORDER BY attempt_no")
"$PY" - "$starts" <<'PY'
import sys
t = [float(v) for v in sys.argv[1].split()]
assert len(t) == 5, f"four start failures and the attempt that ran: {t}"
gaps = [b - a for a, b in zip(t, t[1:])]
print("gaps between attempts:", ", ".join(f"{g:.2f} s" for g in gaps))
assert gaps[0] >= 0.12 and gaps[-1] >= 1.0 and gaps[-1] > gaps[0], gaps
PY

# nohup: the sweep ignores the hangup its terminal sends when it closes, and finishes.
journal="$WORK/nohup.journal"
SWEEP_SECONDS=2 nohup "$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --grid i=1,2 \
  -- "$PY" "$WORK/train.py" --i '{i}' >"$WORK/nohup.out" 2>&1 &
sat=$!
wait_running "$journal" 1 60
kill -HUP $sat
wait_status $sat
cat "$WORK/nohup.out"
[ "$RC" -eq 0 ] || fail "a nohup sweep should go on after SIGHUP, exited $RC"
expect_contains "$(cat "$WORK/nohup.out")" "2 done, 0 failed"
expect_no_trainer_left
echo PASS
