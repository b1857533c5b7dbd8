#!/usr/bin/env bash
# method: bayes ends nearer the optimum than random search of the same size: the metric is a known function of
# the parameters, loss = (x - 0.3)^2 + (y - 0.7)^2 with its minimum 0, and up to two runs go at once (so
# proposals account for the one in flight). Both sweeps have the same seed, run count and parallelism.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

cat >"$WORK/bowl.py" <<'PY'
import argparse, time
p = argparse.ArgumentParser()
p.add_argument("--x", type=float, required=True)
p.add_argument("--y", type=float, required=True)
a = p.parse_args()
time.sleep(1.2)
print(f"loss={(a.x - 0.3) ** 2 + (a.y - 0.7) ** 2:.6f}", flush=True)
PY

write_spec() {  # $1: method, $2: file
  cat >"$2" <<YAML
program: $WORK/bowl.py
method: $1
command:
  - $PY
  - \${program}
  - \${args}
metric: {name: loss, goal: minimize}
run_cap: 14
parameters:
  x: {min: 0.0, max: 1.0}
  y: {min: 0.0, max: 1.0}
saturate:
  seed: 11
  max_per_gpu: 2
  metric_pattern: 'loss=(?P<loss>[0-9.]+)'
YAML
}

best=()
for method in random bayes; do
  write_spec "$method" "$WORK/$method.yaml"
  "$SATURATE" sweep "$WORK/$method.yaml" --warmup 0.3s --window 0.3s >"$WORK/$method.out" 2>"$WORK/$method.err" \
    || { cat "$WORK/$method.err"; fail "the $method sweep failed"; }
  counts=$(journal_query "$WORK/$method.journal" "SELECT count(*), sum(state = 'done') FROM runs")
  [ "$counts" = "14|14" ] || fail "$method: runs and done: $counts"
  best+=("$(journal_query "$WORK/$method.journal" \
    "SELECT min(json_extract(best_metrics_json, '$.loss')) FROM runs")")
done
echo "best loss: random ${best[0]}, bayes ${best[1]}"
# Runs overlapped, so proposals were made with a run in flight (the constant liar).
grep -q "2 runs there" "$WORK/bayes.err" || { cat "$WORK/bayes.err"; fail "the bayes runs never overlapped"; }
"$PY" -c 'import sys; r, b = map(float, sys.argv[1:]); sys.exit(0 if b < r else 1)' "${best[@]}" \
  || fail "bayes (${best[1]}) did not end nearer the optimum than random (${best[0]})"
# Proposals are journaled: a resume of the finished bayes sweep plans nothing new and refuses no run.
"$SATURATE" sweep "$WORK/bayes.yaml" --resume >/dev/null 2>"$WORK/resume.err" || { cat "$WORK/resume.err"; fail "resume"; }
[ "$(journal_query "$WORK/bayes.journal" "SELECT count(*) FROM attempts")" = 14 ] || fail "the resume ran runs again"
echo PASS
