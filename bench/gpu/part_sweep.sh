# shellcheck shell=bash disable=SC2154
# Issue 40's sweep part, sourced by bench/gpu_checks.sh (which sets SAT, PY, CPU, WORK, SMI and step, pack,
# start_power_log, stop_power_log): N runs of the same small model, each a fixed number of steps, finished
#   one after another; k at once for each k in KS (xargs -P, on the one GPU); by `saturate sweep`, not told k; and
#   by `saturate sweep --mps`.
# Every run appends its number to SCHEDULE.done when it has finished, so each schedule's runs can be counted; every
# run prints its own peak memory; the device's memory is logged on the runs' clock (memory.csv) for the whole part,
# and each schedule's window on that clock goes to windows.csv. bench/gpu_report.py makes the table.
SMALL="$here/bench/gpu/small_model.py"
if [ "$CPU" = 1 ]; then
  RUNS=${SWEEP_RUNS:-2} KS=${SWEEP_KS:-2} RUN_SECONDS=${SWEEP_RUN_SECONDS:-0.5} CALIBRATE_SECONDS=1
  MODEL_FLAGS=(--model tiny --batch-size 16 --threads 1)
  read -ra SWEEP_FLAGS <<<"${SWEEP_FLAGS:---warmup 0.3s --window 0.5s}"
  LIMIT_ALONE=60 LIMIT_PACKED=60
else
  RUNS=${SWEEP_RUNS:-8} KS=${SWEEP_KS:-"2 4 8"} RUN_SECONDS=${SWEEP_RUN_SECONDS:-8} CALIBRATE_SECONDS=6
  MODEL_FLAGS=(--model resnet18 --batch-size 128)
  # A run measured 2 s + 2 s after its first step: with the GPU defaults (5 s + 3 s) a run of about 15 s would be
  # measured only as it ends, and nothing would be packed. SWEEP_FLAGS= (empty) measures the defaults instead.
  read -ra SWEEP_FLAGS <<<"${SWEEP_FLAGS---warmup 2s --window 2s}"
  LIMIT_ALONE=150 LIMIT_PACKED=110
fi
export FAKE_NVML_PROCS_DIR="$WORK/device"
mkdir -p "$FAKE_NVML_PROCS_DIR"
mono() { "$PY" -c 'import time; print("%.4f" % time.monotonic())'; }

start_power_log "$WORK/memory.csv"
# One run alone, trained for a few seconds: its own rate over its second half sets every run's steps, so that a run
# trains for about RUN_SECONDS alone, whatever the GPU.
step calibrate $((CALIBRATE_SECONDS + 60)) "$PY" "$SMALL" "${MODEL_FLAGS[@]}" --seconds "$CALIBRATE_SECONDS" \
  --print-every 5
STEPS=$("$PY" - "$WORK/calibrate.txt" "$RUN_SECONDS" <<'PY'
import re, sys
points = [(float(t), int(n)) for n, t in re.findall(r"^step (\d+) t=(\S+)", open(sys.argv[1]).read(), re.M)]
half = points[len(points) // 2:]
rate = (half[-1][1] - half[0][1]) / (half[-1][0] - half[0][0]) if len(half) >= 2 else 0
print(max(20, round(rate * float(sys.argv[2]))))
PY
)
echo "$STEPS" >"$WORK/steps.txt"
echo "${SWEEP_FLAGS[*]}" >"$WORK/sweep_flags.txt"
echo "each run: $STEPS steps (about ${RUN_SECONDS} s of training alone); $RUNS runs"
RUN=("$PY" "$SMALL" "${MODEL_FLAGS[@]}" --steps "$STEPS")

# One run of a fixed schedule: run_one SCHEDULE I, its output in SCHEDULE/run-I.log.
printf '#!/usr/bin/env bash\nmkdir -p "%s/$1"\nexec' "$WORK" >"$WORK/run_one.sh"
printf ' %q' "${RUN[@]}" >>"$WORK/run_one.sh"
printf ' --i "$2" --done-file "%s/$1.done" >"%s/$1/run-$2.log" 2>&1\n' "$WORK" "$WORK" >>"$WORK/run_one.sh"
chmod +x "$WORK/run_one.sh"

# Runs a schedule under `step` and records its window on the runs' clock: schedule NAME LIMIT COMMAND...
schedule() {
  local name=$1 limit=$2 t0 t1
  shift 2
  t0=$(mono)
  step "$name" "$limit" "$@"
  t1=$(mono)
  echo "$name,$t0,$t1" >>"$WORK/windows.csv"
  echo "   $(sort -n "$WORK/$name.done" 2>/dev/null | tr '\n' ' ')done; makespan $("$PY" -c "print(round($t1 - $t0, 1))") s"
  pack
}

schedule sequential $((RUNS * LIMIT_ALONE / 4)) bash -c 'for i in $(seq 1 "$2"); do "$1" sequential "$i"; done' _ \
  "$WORK/run_one.sh" "$RUNS"
for k in $KS; do
  schedule "k$k" "$LIMIT_PACKED" bash -c 'seq 1 "$2" | xargs -P "$3" -n 1 "$1" "k$3"' _ "$WORK/run_one.sh" "$RUNS" "$k"
done
grid=$(seq -s, 1 "$RUNS")
schedule saturate $((LIMIT_PACKED + 40)) "$SAT" sweep --journal "$WORK/saturate.journal" "${SWEEP_FLAGS[@]}" \
  --grid "i=$grid" -- "${RUN[@]}" --i '{i}' --done-file "$WORK/saturate.done"
schedule saturate_mps $((LIMIT_PACKED + 40)) "$SAT" sweep --mps --journal "$WORK/saturate_mps.journal" \
  "${SWEEP_FLAGS[@]}" --grid "i=$grid" -- "${RUN[@]}" --i '{i}' --done-file "$WORK/saturate_mps.done"
stop_power_log "$WORK/memory.csv"
for j in saturate saturate_mps; do
  "$SAT" sweep export --json --journal "$WORK/$j.journal" >"$WORK/$j.export.json" 2>&1
done
echo "$RUNS" >"$WORK/runs.txt"
