#!/usr/bin/env bash
# Runs that stop on the clock (issue 44): a trainer that trains for a set number of seconds whatever its speed. Its
# steps share a "device" (a file lock held 10 ms a step, as kernels queue on one GPU), so two runs at once each train
# at about 60% of their speed alone: packing pays in progress (+20%), and each run trains less in the same time. The
# sweep sees it once two runs have ended (same time, different amounts trained), says so, and from then on runs them
# one per device. The same trainer with a fixed number of steps packs as usual. The packing record is not used
# (--fresh): what is checked is what this sweep finds.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

cat >"$WORK/timed.py" <<'PY'
import argparse, fcntl, os, time
import saturate

p = argparse.ArgumentParser()
p.add_argument("--i", type=int, required=True)
p.add_argument("--seconds", type=float, default=0)  # train this long, whatever the speed
p.add_argument("--steps", type=int, default=0)      # or this many steps, however long
a = p.parse_args()
lock = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "device.lock"), "w")

def steps():
    end = time.monotonic() + a.seconds
    n = 0
    while (a.steps and n < a.steps) or (a.seconds and time.monotonic() < end):
        yield n
        n += 1

n = 0
for n in saturate.track(steps()):
    fcntl.flock(lock, fcntl.LOCK_EX)  # the device's part of the step: one run at a time
    time.sleep(0.010)
    fcntl.flock(lock, fcntl.LOCK_UN)
    time.sleep(0.002)
print(f"run {a.i}: {n + 1} steps", flush=True)
PY

# The most attempts alive at once as an attempt started, among those that started at or after the end of attempt
# number $2 to end (0: all of them).
most_at_once_after_end() {
  "$PY" - "$1" "$2" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT started_unix, ended_unix FROM attempts ORDER BY ended_unix").fetchall()
n = int(sys.argv[2])
since = rows[n - 1][1] if n > 0 else 0
later = [r for r in rows if r[0] >= since]
print(max((sum(1 for s, e in rows if s <= t0 < e) for t0, _ in later), default=0))
PY
}

runs=i=1,2,3,4,5
"$SATURATE" sweep --fresh --cpu --journal "$WORK/clock.journal" --grid "$runs" \
  -- "$PY" "$WORK/timed.py" --i '{i}' --seconds 5 >"$WORK/clock.out" 2>"$WORK/clock.err" ||
  { cat "$WORK/clock.err"; fail "the sweep of timed runs failed"; }
cat "$WORK/clock.out"
cat "$WORK/clock.err"
expect_contains "$(cat "$WORK/clock.out")" "5 done, 0 failed"
expect_contains "$(cat "$WORK/clock.err")" "runs stop on the clock: 2 runs ended after"
expect_contains "$(cat "$WORK/clock.out")" "runs stop on the clock ("
expect_contains "$(cat "$WORK/clock.out")" "one per device, so each trains as long as it would alone"
expect_each_finished_once "$WORK/clock.journal" 5
[ "$(most_at_once_after_end "$WORK/clock.journal" 2)" = 1 ] ||
  fail "timed runs were still packed once seen: $(journal_query "$WORK/clock.journal" \
    "SELECT run_key, started_unix, ended_unix FROM attempts ORDER BY started_unix")"
# sweep status and the page say it too, from the log folder.
expect_contains "$("$SATURATE" sweep status --journal "$WORK/clock.journal")" "runs stop on the clock ("
grep -q "runs stop on the clock" "$WORK/clock.report.html" || fail "report.html does not say why"
[ "$(status_value "$WORK/clock.journal" 'len(j["clocked"])')" = 1 ] || fail "status --json has no clocked shape"

# The same trainer with a fixed number of steps (about 5 s alone) takes longer when it shares: it packs as usual.
"$SATURATE" sweep --fresh --cpu --journal "$WORK/steps.journal" --grid "$runs" \
  -- "$PY" "$WORK/timed.py" --i '{i}' --steps 400 >"$WORK/steps.out" 2>"$WORK/steps.err" ||
  { cat "$WORK/steps.err"; fail "the sweep of fixed-step runs failed"; }
expect_contains "$(cat "$WORK/steps.out")" "5 done, 0 failed"
expect_not_contains "$(cat "$WORK/steps.err" "$WORK/steps.out")" "on the clock"
[ "$(most_at_once_after_end "$WORK/steps.journal" 0)" -ge 2 ] ||
  { cat "$WORK/steps.err"; fail "fixed-step runs were not packed"; }
echo PASS
