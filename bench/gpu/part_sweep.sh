# shellcheck shell=bash disable=SC2154
# Issue 40's sweep part, sourced by bench/gpu_checks.sh (which sets SAT, PY, CPU, WORK, SMI and step, pack,
# start_power_log, stop_power_log): N runs of the same small model, each a fixed number of steps, finished by
# `saturate sweep` (not told k), by `saturate sweep --mps`, k at once for each k in KS from the largest to the
# smallest (xargs -P, on the one GPU), and one after another, in that order: the schedules that matter most run
# first, because the part's time (PART_SECONDS) may not reach the last ones. On an H200 each run was 10 s start-up
# + 8 s training, so sequential alone took 143 s; run first, it and the k's left saturate 23 s and no --mps at all.
# Every run appends its number to SCHEDULE.done when it has finished, so each schedule's runs can be counted; every
# run prints its own peak memory; the device's memory is logged on the runs' clock (memory.csv) for the whole part,
# and each schedule's window on that clock goes to windows.csv (a schedule skipped for want of time too: its
# SCHEDULE.txt says so). bench/gpu_report.py makes the table, and marks a schedule skipped or cut off at its limit.
SMALL="$here/bench/gpu/small_model.py"
if [ "$CPU" = 1 ]; then
  RUNS=${SWEEP_RUNS:-2} KS=${SWEEP_KS:-2} RUN_SECONDS=${SWEEP_RUN_SECONDS:-0.5} CALIBRATE_SECONDS=1
  MODEL_FLAGS=(--model tiny --batch-size 16 --threads 1)
  read -ra SWEEP_FLAGS <<<"${SWEEP_FLAGS:---warmup 0.3s --window 0.5s}"
  # Each schedule's own limit (step cuts it further to end by the part's deadline).
  LIMIT_SATURATE=100 LIMIT_K=60 LIMIT_PER_RUN=15
else
  RUNS=${SWEEP_RUNS:-8} KS=${SWEEP_KS:-"2 4 8"} RUN_SECONDS=${SWEEP_RUN_SECONDS:-8} CALIBRATE_SECONDS=6
  MODEL_FLAGS=(--model resnet18 --batch-size 128)
  # A run measured 2 s + 2 s after its first step: with the GPU defaults (5 s + 3 s) a run of about 15 s would be
  # measured only as it ends, and nothing would be packed. SWEEP_FLAGS= (empty) measures the defaults instead.
  read -ra SWEEP_FLAGS <<<"${SWEEP_FLAGS---warmup 2s --window 2s}"
  # Each schedule's own limit (step cuts it further to end by the part's deadline), from the H200's times (runs of
  # 18 s: saturate 110 s, --mps 6 of 8 done at 100 s, k = 8, 4, 2 in 64, 70, 98 s, sequential 143 s).
  LIMIT_SATURATE=170 LIMIT_K=110 LIMIT_PER_RUN=25
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
  if ! grep -q '^skipped:' "$WORK/$name.txt" 2>/dev/null; then
    echo "   $(sort -n "$WORK/$name.done" 2>/dev/null | tr '\n' ' ')done; makespan $("$PY" -c "print(round($t1 - $t0, 1))") s"
  fi
  pack
}

# The order matters: the part's deadline may cut or skip the last schedules, so the ones the table is for come first.
grid=$(seq -s, 1 "$RUNS")
schedule saturate "$LIMIT_SATURATE" "$SAT" sweep --journal "$WORK/saturate.journal" "${SWEEP_FLAGS[@]}" \
  --grid "i=$grid" -- "${RUN[@]}" --i '{i}' --done-file "$WORK/saturate.done"
schedule saturate_mps "$LIMIT_SATURATE" "$SAT" sweep --mps --journal "$WORK/saturate_mps.journal" \
  "${SWEEP_FLAGS[@]}" --grid "i=$grid" -- "${RUN[@]}" --i '{i}' --done-file "$WORK/saturate_mps.done"
read -ra KS_LIST <<<"$KS"
for k in $(printf '%s\n' "${KS_LIST[@]}" | sort -rn); do
  schedule "k$k" "$LIMIT_K" bash -c 'seq 1 "$2" | xargs -P "$3" -n 1 "$1" "k$3"' _ "$WORK/run_one.sh" "$RUNS" "$k"
done
schedule sequential $((RUNS * LIMIT_PER_RUN)) bash -c 'for i in $(seq 1 "$2"); do "$1" sequential "$i"; done' _ \
  "$WORK/run_one.sh" "$RUNS"
stop_power_log "$WORK/memory.csv"
for j in saturate saturate_mps; do
  "$SAT" sweep export --json --journal "$WORK/$j.journal" >"$WORK/$j.export.json" 2>&1
done
echo "$RUNS" >"$WORK/runs.txt"
