#!/usr/bin/env bash
# Side by side, in one run: the exhaustive grid over a knob space against `saturate tune`'s guided search of the
# same space, on the example trainer. Prints tune's best throughput over the grid's best (target >= 0.98) and
# tune's time over the grid's time (target <= 0.25), then measures both winners again, alternating, outside
# saturate (the trainer's own "done: ... samples/s" over the same number of samples), because the best of many
# noisy grid trials is biased upwards.
#
#   bench/tune_vs_grid.sh [BUILD_DIR]        (default: build; needs BUILD_DIR/saturate)
#
# Environment: OUT (default /tmp/saturate-tune-bench), IMAGES (2000), TRIAL_BUDGET (15s), REPEATS (3),
# MODEL (tiny). Both searches use a fresh cache of their own, the same per-trial limit and stopping rule.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
SAT=$build/saturate
OUT=${OUT:-/tmp/saturate-tune-bench}
IMAGES=${IMAGES:-2000}
TRIAL_BUDGET=${TRIAL_BUDGET:-15s}
REPEATS=${REPEATS:-3}
MODEL=${MODEL:-tiny}
PY=/usr/bin/python3
[ -x "$SAT" ] || { echo "no $SAT: build it first (./scripts/build)" >&2; exit 2; }

rm -rf "$OUT"
mkdir -p "$OUT"
DATA="$OUT/../saturate-bench-images-$IMAGES"
CMD=("$PY" "$here/examples/train_images.py" --data "$DATA" --images "$IMAGES" --epochs 100000 --log-every 10
     --model "$MODEL")
# Both search tune's default knob space on this machine (no --knob): batch_size, workers, amp, preload (and with a
# GPU pin_memory and the allocator); the grid takes every DoublingLevel of batch_size and every worker count.
KNOBS=()

# The dataset is generated once, outside both timings.
"$PY" "$here/examples/train_images.py" --data "$DATA" --images "$IMAGES" --steps 1 --log-every 0 >/dev/null

run_search() {
  local name=$1; shift
  date +%s.%N >"$OUT/$name.start"
  "$SAT" tune --fresh --cache "$OUT/$name.db" --out "$OUT/$name" --budget 2h --trial-budget "$TRIAL_BUDGET" \
    ${KNOBS[@]+"${KNOBS[@]}"} "$@" -- "${CMD[@]}" >"$OUT/$name.txt" 2>"$OUT/$name.err"
  date +%s.%N >"$OUT/$name.end"
}

echo "grid search (every combination)..."
run_search grid --strategy grid
echo "guided search (saturate tune)..."
run_search tune

# The winners, measured again outside saturate over the same number of samples each, alternating.
"$PY" - "$OUT" "$REPEATS" "$here/bench/remeasure.py" <<'EOF'
import json, os, subprocess, sys

out, repeats, remeasure = sys.argv[1], int(sys.argv[2]), sys.argv[3]
res = {name: json.load(open(os.path.join(out, name, "results.json"))) for name in ("grid", "tune")}
secs = {name: float(open(os.path.join(out, name + ".end")).read()) - float(open(os.path.join(out, name + ".start")).read())
        for name in ("grid", "tune")}
ok = ("stopped", "finished", "timed_out")

def best_full(r):
    """The fastest full-training trial: (samples/s, knob values)."""
    t = max((t for t in r["trials"] if t["mode"] == "full" and t["exit_class"] in ok and t["samples_per_s"] > 0),
            key=lambda t: t["samples_per_s"])
    return t["samples_per_s"], t["knobs"]

grid_best, grid_knobs = best_full(res["grid"])
tune_best, tune_knobs = best_full(res["tune"])
tune_rec = res["tune"]["throughput"]["recommended"]
print()
print("| search | trials | wall time | best full-training trial | its settings |")
print("| --- | ---: | ---: | ---: | --- |")
for name, rate, knobs in (("grid", grid_best, grid_knobs), ("tune", tune_best, tune_knobs)):
    print("| %s | %d | %.0f s | %.0f samples/s | %s |" % (
        name, len(res[name]["trials"]), secs[name], rate, " ".join("%s=%s" % kv for kv in sorted(knobs.items()))))
print()
print("tune's recommendation: %s, confirmed at %.0f samples/s" % (
    " ".join("%s=%s" % kv for kv in sorted(res["tune"]["recommended"].items())), tune_rec))
print("in-search: tune best / grid best = %.3f (target >= 0.98); recommended / grid best = %.3f" % (
    tune_best / grid_best, tune_rec / grid_best))
print("time: tune / grid = %.3f (target <= 0.25)" % (secs["tune"] / secs["grid"]))
same = res["tune"]["recommended"] == res["grid"]["recommended"]
print("tune's recommendation %s the grid's winner" % ("is exactly" if same else "differs from"))

cmds = {name: res[name]["recommended_command"] for name in ("grid", "tune")}
rates = json.loads(subprocess.run([sys.executable, remeasure, str(repeats)] + ["%s=%s" % kv for kv in cmds.items()],
                                  capture_output=True, text=True, check=True).stdout)
mean = {k: sum(v) / len(v) for k, v in rates.items()}
print("re-measured, %d alternating runs each: grid winner %s, tune's recommendation %s samples/s" % (
    repeats, ", ".join("%.0f" % x for x in rates["grid"]), ", ".join("%.0f" % x for x in rates["tune"])))
print("re-measured: tune / grid = %.3f (target >= 0.98)" % (mean["tune"] / mean["grid"]))
EOF
