# shellcheck shell=bash disable=SC2154
# Issue 40's stacks part, sourced by bench/gpu_checks.sh (which sets SAT, PY, CPU, WORK and step, pack): probe of
# four training stacks as they are, each printing its own step times, which bench/gpu_report.py reads over probe's
# steady window of the same run. A stack whose package this Python lacks is skipped, and skipped.txt says which.
G="$here/bench/gpu"
if [ "$CPU" = 1 ]; then
  BUDGET=${STACK_BUDGET:-20s} LIMIT=60 PROBE_FLAGS=(--target 0.1)
  MODEL_FLAGS=(--model tiny --batch-size 16 --print-every 2)
  HF_FLAGS=(--batch-size 8 --seq-len 32 --print-every 2)
else
  BUDGET=${STACK_BUDGET:-60s} LIMIT=100 PROBE_FLAGS=()
  MODEL_FLAGS=(--batch-size 128)
  HF_FLAGS=(--batch-size 32 --bf16)
fi
# torchrun as installed beside this Python, else the same launcher as a module. Where it cannot start a rank at all
# (Debian's torch 1.13 torchrun on Python 3.11 fails in its argument parsing), the job is launched by the stand-in the
# end-to-end tests use (tests/e2e/scripts/launch_ranks.py: one process per rank with torchrun's environment), and
# torchrun.launcher.txt says so.
TORCHRUN=("$PY" -m torch.distributed.run)
py_dir=$(dirname "$(command -v "$PY")")
[ -x "$py_dir/torchrun" ] && TORCHRUN=("$py_dir/torchrun")
TORCHRUN_RANKS=(--nproc_per_node 2)
if ! why=$(timeout 60 "${TORCHRUN[@]}" --nproc_per_node 1 --no_python true 2>&1); then
  echo "torchrun cannot start a rank with $PY ($(echo "$why" | tail -n 1)): launched by tests/e2e/scripts/launch_ranks.py" |
    tee "$WORK/torchrun.launcher.txt"
  TORCHRUN=("$PY" "$here/tests/e2e/scripts/launch_ranks.py")
  TORCHRUN_RANKS=(--nproc 2)
fi

# probe_stack NAME MODULE COMMAND...: probes COMMAND into WORK/NAME when MODULE imports, else says why not.
probe_stack() {
  local name=$1 module=$2 why
  shift 2
  if ! why=$("$PY" -c "import $module" 2>&1); then
    echo "$name: skipped: $module does not import with $PY ($(echo "$why" | tail -n 1))" | tee -a "$WORK/skipped.txt"
    return 0
  fi
  echo "$*" >"$WORK/$name.command.txt"
  step "$name" "$LIMIT" "$SAT" probe --budget "$BUDGET" "${PROBE_FLAGS[@]}" --out "$WORK/$name" -- "$@"
  pack
}

probe_stack hf_trainer transformers "$PY" "$G/stack_hf_trainer.py" --steps 1000000 "${HF_FLAGS[@]}"
probe_stack lightning lightning "$PY" "$G/stack_lightning.py" --steps 1000000 "${MODEL_FLAGS[@]}"
probe_stack accelerate accelerate "$PY" -m accelerate.commands.launch --num_processes 1 --num_machines 1 \
  --mixed_precision no --dynamo_backend no "$G/stack_accelerate.py" --steps 1000000 "${MODEL_FLAGS[@]}"
probe_stack torchrun torch.distributed.run "${TORCHRUN[@]}" "${TORCHRUN_RANKS[@]}" "$G/stack_torchrun.py" \
  --steps 1000000 "${MODEL_FLAGS[@]}"
