#!/usr/bin/env bash
# Fault injection: kill -9 of saturate at random points of a sweep, round after round, then --resume to the end.
# Nothing is lost (every run done), nothing runs twice (one finished attempt per run), no process is left. The
# command is a shell pipeline, so the trainer is saturate's grandchild: PR_SET_PDEATHSIG takes only the shell with
# saturate, and the trainer would live on (here: the first attempt of a run hangs for good); the resume must find
# and stop what the dead controller left.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

rounds=${KILL9_ROUNDS:-20}
journal="$WORK/k.journal"
mkdir -p "$WORK/first"
sweep=("$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --metric loss
  --metric-pattern 'loss=(?P<loss>[0-9.]+)' --grid i=1,2,3,4,5,6)
# The first attempt of each run hangs (a stuck trainer), later ones train for a second.
command=(-- sh -c "if [ -e '$WORK/first/{i}' ]; then h=0; else touch '$WORK/first/{i}'; h=1; fi; \
$PY '$WORK/train.py' --i {i} --seconds 1 --hang \$h; true")

RANDOM=19
killed=0
for round in $(seq 1 "$rounds"); do
  resume=()
  [ -f "$journal" ] && resume=(--resume)
  "${sweep[@]}" "${resume[@]}" "${command[@]}" >"$WORK/r$round.out" 2>"$WORK/r$round.err" &
  sat=$!
  # A random point: 0.1 to 2.5 s in (start-up, admissions, runs ending, the journal being written).
  sleep "$(printf '0.%d' $((RANDOM % 10)))"
  sleep $((RANDOM % 3))
  if kill -9 $sat 2>/dev/null; then killed=$((killed + 1)); fi
  wait $sat 2>/dev/null || true
  # The journal is whole after every kill (status exits 1 on a broken invariant).
  if [ -f "$journal" ]; then
    "$SATURATE" sweep status --journal "$journal" >/dev/null 2>"$WORK/status.err" || true
    expect_not_contains "$(cat "$WORK/status.err")" "inconsistent"
  fi
done
echo "killed saturate $killed times in $rounds rounds"
# Every first attempt hangs, so the sweep can only have got this far through resumes that stopped them.
grep -h "left running by the interrupted controller" "$WORK"/r*.err || fail "no resume stopped a leftover process"

"${sweep[@]}" --resume "${command[@]}" >"$WORK/final.out" 2>"$WORK/final.err"
cat "$WORK/final.err" "$WORK/final.out"
expect_contains "$(cat "$WORK/final.out")" "6 done, 0 failed"
expect_no_trainer_left
[ "$(status_value "$journal" 'j["consistent"]')" = True ] || fail "status says inconsistent"
expect_each_finished_once "$journal" 6
# (A trainer orphaned by a kill may finish its work before the next controller stops it; the journal still counts
# one finished attempt per run.)
for i in 1 2 3 4 5 6; do grep -qx "$i" "$WORK/done.log" || fail "run $i never did its work"; done

# A kill right as a growth step admits several runs at once (packing.h rule 6: sleeping runs slow nobody, so the
# step after a gain of +100% takes two newcomers), then --resume: still every run once.
burst=("$SATURATE" sweep --fresh --journal "$WORK/burst.journal" --warmup 0.3s --window 0.3s
  --grid i=11,12,13,14,15,16)
burst_command=(-- "$PY" "$WORK/train.py" --i '{i}' --seconds 4)
"${burst[@]}" "${burst_command[@]}" >"$WORK/burst.out" 2>"$WORK/burst.err" &
sat=$!
wait_until "grep -q 'the next step tries 2 more at once' '$WORK/burst.err'" 60
wait_until "[ \$(grep -c 'started on' '$WORK/burst.err') -ge 3 ]" 60
kill -9 $sat
wait $sat 2>/dev/null || true
"${burst[@]}" --resume "${burst_command[@]}" >"$WORK/burst2.out" 2>"$WORK/burst2.err" ||
  { cat "$WORK/burst2.err"; fail "the resume failed"; }
expect_contains "$(cat "$WORK/burst2.out")" "6 done, 0 failed"
expect_each_finished_once "$WORK/burst.journal" 6
expect_no_trainer_left
echo PASS
