#!/usr/bin/env bash
# `kill -9` of saturate in the middle of an 8-run sweep: its runs die with it (no orphans), and `--resume` finishes
# the sweep with every run done exactly once in the journal. Then status and export read the results.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

journal="$WORK/s.journal"
sweep=("$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --metric loss
  --metric-pattern 'loss=(?P<loss>[0-9.]+)' --grid i=1,2,3,4,5,6,7,8)
command=(-- "$PY" "$WORK/train.py" --i '{i}')

SWEEP_SECONDS=3 "${sweep[@]}" "${command[@]}" >"$WORK/first.out" 2>"$WORK/first.err" &
sat=$!
# Midway: some runs done, others running.
wait_until '[ -f "$journal" ] && [ "$(journal_query "$journal" "SELECT count(*) FROM runs WHERE state = '"'done'"'")" -ge 2 ] \
  && [ "$(journal_query "$journal" "SELECT count(*) FROM runs WHERE state = '"'running'"'")" -ge 1 ]' 60
kill -9 $sat
wait $sat 2>/dev/null || true
cat "$WORK/first.err"
running=$(journal_query "$journal" "SELECT count(*) FROM runs WHERE state = 'running'")
[ "$running" -ge 1 ] || fail "expected runs left running in the journal after kill -9"
# The runs died with saturate: PDEATHSIG reaches each run's process at once.
sleep 0.5
expect_no_trainer_left

SWEEP_SECONDS=3 "${sweep[@]}" --resume "${command[@]}" >"$WORK/resume.out" 2>"$WORK/resume.err"
cat "$WORK/resume.err" "$WORK/resume.out"
expect_contains "$(cat "$WORK/resume.out")" "8 done, 0 failed"
expect_no_trainer_left

# Exactly once: every run done, with one finished attempt; the others were interrupted by the kill.
[ "$(journal_query "$journal" "SELECT count(*) FROM runs WHERE state = 'done' AND attempts >= 1 AND failures = 0")" = 8 ] \
  || fail "not all runs done"
finished=$(journal_query "$journal" "SELECT run_key, count(*) FROM attempts WHERE exit_class = 'finished' GROUP BY run_key")
[ "$(echo "$finished" | wc -l)" = 8 ] || fail "finished attempts: $finished"
[ -z "$(echo "$finished" | grep -v '|1$' || true)" ] || fail "a run finished twice: $finished"
others=$(journal_query "$journal" "SELECT DISTINCT exit_class FROM attempts WHERE exit_class != 'finished'")
[ "$others" = interrupted ] || fail "other attempts should be interrupted ones: $others"
[ "$(journal_query "$journal" "SELECT count(*) FROM attempts WHERE exit_class = 'interrupted'")" = "$running" ] \
  || fail "every attempt open at the kill is marked interrupted"
# Each run's work completed at least once; a run killed mid-way never wrote its line.
for i in 1 2 3 4 5 6 7 8; do grep -qx "$i" "$WORK/done.log" || fail "run $i never finished its work"; done

# A third invocation without --resume is refused; with it, nothing is left to do.
expect_exit 2 "${sweep[@]}" "${command[@]}"
expect_contains "$ERR" "--resume"

# Status and export: best first by the metric (loss = 1/i, minimised: run 8 first).
[ "$(status_value "$journal" 'j["counts"]["done"]')" = 8 ] || fail "status counts"
[ "$(status_value "$journal" 'j["consistent"]')" = True ] || fail "status says inconsistent"
[ "$(status_value "$journal" 'j["runs"][0]["params"]["i"]')" = 8 ] || fail "best run should be i=8"
table=$("$SATURATE" sweep status --journal "$journal")
echo "$table"
expect_contains "$table" "loss (min)"
"$SATURATE" sweep export --csv --journal "$journal" -o "$WORK/results.csv"
head -n1 "$WORK/results.csv" | grep -q '^rank,key,index,state,stopped_early,attempts,metric.loss,param.i,' || fail "CSV header"
[ "$(wc -l <"$WORK/results.csv")" = 9 ] || fail "CSV rows"
[ "$("$SATURATE" sweep export --json --journal "$journal" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" = 8 ] \
  || fail "JSON export"
echo PASS
