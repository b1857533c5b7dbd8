# shellcheck shell=bash disable=SC2154
# Issue 40's oom part, sourced by bench/gpu_checks.sh (which sets SAT, PY, CPU, WORK and step, pack):
#  1. a sweep of runs of the small model where each holds 30% of the device and the last holds 75% (a dataset kept
#     on the device; HOLD: one share per run): alone it fits, beside another run it does not. With --retries 0, an
#     out-of-memory attempt must be queued again (not counted as a failure) and the run done once.
#  2. the batch searches, all under one per-process memory cap (MEMORY_LIMIT_MIB: on a GPU
#     torch.cuda.set_per_process_memory_fraction, so the allocator's own out-of-memory error marks the boundary):
#     saturate tune's (--knob batch_size), Lightning's BatchSizeFinder (power, binsearch), accelerate's
#     find_executable_batch_size; then each batch found, trained afresh for a few steps under the same cap.
SMALL="$here/bench/gpu/small_model.py"
G="$here/bench/gpu"
if [ "$CPU" = 1 ]; then
  MODEL_FLAGS=(--model tiny --threads 1)
  RUN_FLAGS=(--batch-size 16 --seconds 1.5) HOLD=0.3,0.3,0.75
  read -ra SWEEP_FLAGS <<<"${SWEEP_FLAGS:---warmup 0.3s --window 0.5s}"
  MEMORY_LIMIT_MIB=32 BATCH_RANGE=64:4096 BATCH_MULTIPLE=32 LIGHTNING_START=16 ACCELERATE_START=2048
  TUNE_FLAGS=(--budget "${TUNE_BUDGET:-40s}" --trial-budget 6s --target 0.1)
  LIMIT_SWEEP=60 LIMIT_TUNE=60 LIMIT_FINDER=60 VERIFY_STEPS=3
else
  MODEL_FLAGS=(--model resnet18)
  RUN_FLAGS=(--batch-size 128 --seconds 25) HOLD=0.3,0.3,0.3,0.75
  read -ra SWEEP_FLAGS <<<"${SWEEP_FLAGS:-}"
  MEMORY_LIMIT_MIB=2048 BATCH_RANGE=128:65536 BATCH_MULTIPLE=64 LIGHTNING_START=128 ACCELERATE_START=65536
  TUNE_FLAGS=(--budget "${TUNE_BUDGET:-150s}" --trial-budget 15s)
  LIMIT_SWEEP=180 LIMIT_TUNE=190 LIMIT_FINDER=60 VERIFY_STEPS=30
fi
export FAKE_NVML_PROCS_DIR="$WORK/device"
mkdir -p "$FAKE_NVML_PROCS_DIR"
echo "$MEMORY_LIMIT_MIB" >"$WORK/memory_limit_mib.txt"

# 1. The sweep: the last run cannot share the device.
step oom_sweep "$LIMIT_SWEEP" "$SAT" sweep --journal "$WORK/oom.journal" --retries 0 "${SWEEP_FLAGS[@]}" \
  --grid "i=$(seq -s, 1 "$(tr , '\n' <<<"$HOLD" | wc -l)")" -- "$PY" "$SMALL" "${MODEL_FLAGS[@]}" "${RUN_FLAGS[@]}" \
  --hold-fraction "$HOLD" --i '{i}' --done-file "$WORK/oom.done"
pack

# 2. The batch searches on one model and one cap.
step tune_batch "$LIMIT_TUNE" "$SAT" tune "${TUNE_FLAGS[@]}" --knob "batch_size=$BATCH_RANGE" \
  --batch-multiple "$BATCH_MULTIPLE" --out "$WORK/tune_batch" --cache "$WORK/tune.db" -- \
  "$PY" "$SMALL" "${MODEL_FLAGS[@]}" --batch-size '{batch_size}' --steps 100000000 \
  --memory-limit-mib "$MEMORY_LIMIT_MIB"
pack
for finder in lightning-power lightning-binsearch accelerate; do
  module=${finder%%-*}
  start=$LIGHTNING_START
  [ "$module" = accelerate ] && start=$ACCELERATE_START
  if why=$("$PY" -c "import $module" 2>&1); then
    step "finder_$finder" "$LIMIT_FINDER" "$PY" "$G/batch_finders.py" "$finder" --start "$start" "${MODEL_FLAGS[@]:0:2}" \
      --memory-limit-mib "$MEMORY_LIMIT_MIB"
  else
    echo "$finder: skipped: $module does not import with $PY ($(echo "$why" | tail -n 1))" | tee -a "$WORK/skipped.txt"
  fi
  pack
done

# Each batch found, trained afresh under the same cap: does it fit?
{
  "$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
for key in ("recommended", "largest_fitting"):
    b = (j.get(key) or {}).get("batch_size")
    if b:
        print("tune_" + key, b)' "$WORK/tune_batch/results.json" 2>/dev/null
  for f in "$WORK"/finder_*.txt; do
    [ -f "$f" ] && sed -n 's/^finder {.*"finder": "\([a-z-]*\)".*"found": \([0-9]*\)}$/\1 \2/p' "$f"
  done
} >"$WORK/found.txt"
# One run per distinct batch; every search that found it shares the answer.
while read -r source batch; do
  if [ ! -f "$WORK/verify_$batch.txt" ]; then
    step "verify_$batch" "$LIMIT_FINDER" "$PY" "$SMALL" "${MODEL_FLAGS[@]}" --batch-size "$batch" \
      --steps "$VERIFY_STEPS" --print-every 1 --memory-limit-mib "$MEMORY_LIMIT_MIB"
  fi
  echo "$source $batch $(grep -c 'CUDA out of memory' "$WORK/verify_$batch.txt")" >>"$WORK/verified.txt"
done <"$WORK/found.txt"
pack
