#!/usr/bin/env bash
# The steady-state estimator's accuracy: a probe that stops early (at its default ±2% target) against the same
# measurement run five times longer (an unreachable target keeps it going), side by side, for a compute-bound and
# a loader-bound configuration of the example trainer. Prints a table for docs/benchmarks.md, with the load
# average before and after each probe.
#
# "long over early span" is the long run's own rate over the seconds the early run measured (the mean of its
# series bins there): when it is far from the early estimate, the two runs differed from the start (the machine,
# not the estimator); when it is close, the long run changed later (a drift the early stop missed).
#
# A second table replays the long run's own observations (its estimator.csv) through the stop rule at the default
# target (estimator_replay, built beside saturate): where that run would have stopped early and at what estimate,
# against its own long estimate. Two runs of one command on a shared virtual machine can differ by 10% from their
# first seconds; one run's prefix and its whole do not, so this checks the early stop on the same data.
#
# The third configuration waits 20 ms before reading each file (a slow disk or network filesystem): its rate is set
# mostly by those waits, not by the CPU's speed, which on a shared virtual machine moves by 10-25% within minutes
# and takes the two CPU-bound configurations with it.
#
# Run: bench/estimator_accuracy.sh [build/saturate]
# KEEP=DIR keeps each probe's probe.json and stage logs under DIR/<configuration>-{early,long}.
# ONLY=loader-bound (or compute-bound, storage-bound) runs one configuration; EARLY_BUDGET=120s gives the early
# probe more room to stop on its interval on a slow machine (default 60s; the early stop, not the budget, is what
# is checked).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SATURATE=${1:-$here/build/saturate}
REPLAY=$(dirname "$SATURATE")/estimator_replay
PY=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep=${KEEP:-$work}
data="${TMPDIR:-/tmp}/saturate-e2e-images-600"
train=("$PY" "$here/examples/train_images.py" --data "$data" --images 600 --epochs 100000 --log-every 5 --no-helper)

field() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1]))['stages']['full']; print($2)" "$1"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

printf '| configuration | early: samples/s (95%% CI) | early: time | 5x longer: samples/s | difference | long inside early CI | long over early span | load before early / long / after |\n'
printf '| --- | ---: | ---: | ---: | ---: | --- | ---: | --- |\n'
replays=()
for cfg in "compute-bound:--model tiny --preload on --workers 0 --batch-size 32" \
           "loader-bound:--model tiny --workers 0 --transform-cost 8 --batch-size 32" \
           "storage-bound:--model tiny --workers 0 --read-latency-ms 20 --batch-size 8"; do
  name=${cfg%%:*}
  [ -n "${ONLY:-}" ] && [ "$ONLY" != "$name" ] && continue
  read -r -a args <<<"${cfg#*:}"
  load_early=$(load)
  "$SATURATE" probe --json --out "$keep/$name-early" --parse saturate-example --budget "${EARLY_BUDGET:-60s}" -- "${train[@]}" \
    "${args[@]}" >"$work/early.json"
  early_wall=$(field "$work/early.json" "j['outcome']['duration_s']")
  long_budget=$("$PY" -c "print(max(20, round(5 * $early_wall)))")
  load_long=$(load)
  "$SATURATE" probe --json --out "$keep/$name-long" --parse saturate-example --target 0.0001 \
    --budget "${long_budget}s" -- "${train[@]}" "${args[@]}" >"$work/long.json" || true
  load_after=$(load)
  "$PY" - "$work/early.json" "$work/long.json" "$name" "$load_early" "$load_long" "$load_after" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["stages"]["full"]
l = json.load(open(sys.argv[2]))["stages"]["full"]
diff = (e["samples_per_s"] - l["samples_per_s"]) / l["samples_per_s"] * 100
inside = e["ci_low"] <= l["samples_per_s"] <= e["ci_high"]
lo, hi = e["warmup_s"], e["warmup_s"] + e["steady_s"]
span = [rate for t, rate in l["series"] if lo <= t <= hi]
over_span = f"{sum(span) / len(span):.1f}" if span else "n/a"
print(f"| {sys.argv[3]} | {e['samples_per_s']:.1f} ({e['ci_low']:.1f}–{e['ci_high']:.1f}) | "
      f"{e['outcome']['duration_s']:.1f} s | {l['samples_per_s']:.1f} (over {l['outcome']['duration_s']:.0f} s) | "
      f"{diff:+.1f}% | {'yes' if inside else 'no'} | {over_span} | {sys.argv[4]} / {sys.argv[5]} / {sys.argv[6]} |")
PY
  replays+=("$name $("$REPLAY" "$keep/$name-long/full/estimator.csv")")
done

printf '\n| configuration (the long run replayed) | stopped early at | early: samples/s (95%% CI) | whole run: samples/s | difference | whole inside early CI |\n'
printf '| --- | ---: | ---: | ---: | ---: | --- |\n'
for row in "${replays[@]}"; do
  "$PY" - "${row%% *}" "${row#* }" <<'PY'
import json, sys
r = json.loads(sys.argv[2])
e, w = r["early"], r["whole"]
at = f"{r['early_at_s']:.1f} s" if r["early_stopped"] else f"never (log ends at {r['fed_s']:.0f} s)"
diff = (e["samples_per_s"] - w["samples_per_s"]) / w["samples_per_s"] * 100
ci = f"{e['ci_low']:.1f}–{e['ci_high']:.1f}" if e["ci_low"] is not None else "n/a"
inside = e["ci_low"] is not None and e["ci_low"] <= w["samples_per_s"] <= e["ci_high"]
print(f"| {sys.argv[1]} | {at} | {e['samples_per_s']:.1f} ({ci}) | {w['samples_per_s']:.1f} | {diff:+.1f}% | "
      f"{'yes' if inside else 'no'} |")
PY
done
