#!/usr/bin/env bash
# early_terminate (Hyperband, as W&B defines it) stops the runs that are behind and finishes sooner: the same
# grid sweep runs with and without it, and the makespans are printed side by side. Each run reports its loss
# once per iteration for 12 iterations (0.25 s each); run q's loss is q * (1 + 1 / iteration), so run 1 leads
# everywhere. min_iter 2, eta 3: the bands are 2, 6, 18, ...
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

cat >"$WORK/iterate.py" <<'PY'
import argparse, time
p = argparse.ArgumentParser()
p.add_argument("--q", type=float, required=True)
a = p.parse_args()
for it in range(1, 13):
    time.sleep(0.25)
    print(f"iteration {it} loss={a.q * (1 + 1 / it):.4f}", flush=True)
PY

write_spec() {  # $1: file, $2: extra top-level YAML
  cat >"$1" <<YAML
program: $WORK/iterate.py
method: grid
command:
  - $PY
  - \${program}
  - \${args}
metric: {name: loss, goal: minimize}
$2
parameters:
  q: {values: [1, 2, 3, 4, 5, 6]}
saturate:
  max_per_gpu: 2
  metric_pattern: 'loss=(?P<loss>[0-9.]+)'
YAML
}
write_spec "$WORK/plain.yaml" ""
write_spec "$WORK/hyperband.yaml" "early_terminate: {type: hyperband, min_iter: 2, eta: 3}"

declare -A makespan
for name in plain hyperband; do
  start=$(date +%s.%N)
  "$SATURATE" sweep "$WORK/$name.yaml" --warmup 0.3s --window 0.3s >"$WORK/$name.out" 2>"$WORK/$name.err" \
    || { cat "$WORK/$name.err"; fail "the $name sweep failed"; }
  makespan[$name]=$("$PY" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$start")
done
cat "$WORK/hyperband.err"
echo "makespan: without early_terminate ${makespan[plain]} s, with hyperband ${makespan[hyperband]} s"

j="$WORK/hyperband.journal"
[ "$(journal_query "$WORK/plain.journal" "SELECT count(*) FROM runs WHERE state = 'done'")" = 6 ] || fail "plain"
states=$(journal_query "$j" "SELECT json_extract(params_json, '$.q'), state, a.exit_class FROM runs r
  JOIN attempts a ON a.run_key = r.key ORDER BY idx")
echo "$states"
[ "$(head -1 <<<"$states")" = "1|done|finished" ] || fail "the leading run should finish: $states"
stopped=$(grep -c '|done|stopped_early$' <<<"$states" || true)
((stopped >= 4)) || fail "the runs behind should be stopped early (stopped: $stopped)"
[ "$(journal_query "$j" "SELECT count(*) FROM runs WHERE state = 'failed' OR failures > 0")" = 0 ] \
  || fail "a run stopped early is not a failure"
expect_contains "$(cat "$WORK/hyperband.err")" "stopped early"
# Every observation is journaled: a stopped run's metric points are the iterations it reported.
points=$(journal_query "$j" "SELECT count(*) FROM metrics m JOIN runs r ON r.key = m.run_key
  WHERE json_extract(r.params_json, '$.q') = 6")
((points >= 2 && points < 12)) || fail "run q=6 should have reported 2 to 11 iterations, journal has $points"
"$PY" -c 'import sys; p, h = map(float, sys.argv[1:]); sys.exit(0 if h < 0.8 * p else 1)' \
  "${makespan[plain]}" "${makespan[hyperband]}" || fail "hyperband did not finish sooner"
status=$("$SATURATE" sweep status --journal "$j")
expect_contains "$status" "stopped early"
echo PASS
