# shellcheck shell=bash disable=SC2154,SC2034
# Issue 40's tune part, sourced by bench/gpu_checks.sh (which sets SAT, PY, CPU, WORK and tune_and_paste): tune of
# the unmodified ResNet-50 loop (bench/mfu_resnet50.py, no placeholder: its own flags are found) with trials long
# enough for CUDA's start, cuDNN's search and the FLOP count, then its recommended line run as pasted, outside
# saturate, timed by its own step lines.
if [ "$CPU" = 1 ]; then
  # On the CPU the loop is bench/gpu/small_model.py's tiny convnet (the same flags: --batch-size, --workers, --amp):
  # the ResNet-50 loop takes about a second a step on a 2-core machine, so a rehearsal's trials would see too few
  # steps to measure and tune would stop at its baseline.
  TUNE_LOOP=("$PY" "$here/bench/gpu/small_model.py" --model tiny --threads 1 --amp off --batch-size 16 --workers 0
    --steps 100000000 --print-every 5)
  tune_and_paste "${TUNE_BUDGET:-20s}" 60 6 --trial-budget 6s --target 0.1
else
  tune_and_paste "${TUNE_BUDGET:-300s}" 330 45 --trial-budget 25s
fi
pack
