#!/usr/bin/env bash
# Bad input gets exit 2 naming the problem, before any trial runs; Ctrl-C keeps what was measured (exit 130,
# results.json says interrupted) and leaves no process behind.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

expect_exit 2 "$SATURATE" tune --cache "$WORK/u.db" --knob batch_size=64:16 -- true
expect_contains "$ERR" "64 is above 16"
expect_exit 2 "$SATURATE" tune --cache "$WORK/u.db" -- "$PY" train.py --lr "{lr}"
expect_contains "$ERR" "--knob lr=LO:HI"
expect_exit 2 "$SATURATE" tune --budget 5s -- true
expect_contains "$ERR" "at least 20s"
expect_exit 2 "$SATURATE" tune --cache "$WORK/u.db" --price-per-hour -2 -- true
expect_contains "$ERR" "--price-per-hour"
expect_exit 2 "$SATURATE" tune --strategy random -- true
expect_contains "$ERR" "guided or grid"
expect_exit 2 "$SATURATE" tune --back-to-back sometimes -- true
expect_contains "$ERR" "--back-to-back 'sometimes' is not on or off"
expect_exit 2 "$SATURATE" tune
expect_contains "$ERR" "after --"
expect_exit 2 "$SATURATE" tune --samples-per-step -4 -- true
expect_contains "$ERR" "--samples-per-step '-4' is not a positive number"
# probe and tune share their measurement flags: the same check, the same message.
expect_exit 2 "$SATURATE" probe --samples-per-step -4 -- true
expect_contains "$ERR" "--samples-per-step '-4' is not a positive number"
expect_exit 2 "$SATURATE" tune --cache "$WORK/u.db" --parse 'step (?P<step_s>[0-9.]+)' -- true
expect_contains "$ERR" "give --batch-size N"

# --steps 100000007: a command line of this test's own, for the survivors' check below (another test's tune of the
# same script may be running beside it on a larger machine).
"$SATURATE" tune --budget 5m --cache "$WORK/i.db" --out "$WORK/int" -- "${OOM[@]}" --steps 100000007 --limit 100 \
  >"$WORK/int.txt" 2>&1 &
sat=$!
for _ in $(seq 1 100); do
  [ -d "$WORK/int/trials/002-loader" ] && break
  sleep 0.2
done
[ -d "$WORK/int/trials/002-loader" ] || fail "the second trial never started"
kill -INT $sat
set +e
wait $sat
rc=$?
set -e
cat "$WORK/int.txt"
[ "$rc" -eq 130 ] || fail "an interrupted tune should exit 130, got $rc"
[ "$(jq_py "$WORK/int/results.json" 'j["interrupted"]')" = True ] || fail "results.json should say interrupted"
[ "$(jq_py "$WORK/int/results.json" 'j["trials"][0]["samples_per_s"] > 0')" = True ] || fail "the baseline was lost"
sleep 0.5
! pgrep -f "oom_at_batch.py .*--steps 100000007" >/dev/null || fail "a trial's process survived the interrupt"
echo ok
