#!/usr/bin/env bash
# The GPU checks of the open issues, for a machine with an NVIDIA GPU lent for minutes: it only collects raw data
# into OUTDIR (probe.json files and stage logs, tune's results, sweep journals, nvidia-smi's own samples on the same
# clock as probe's windows); bench/gpu_report.py turns OUTDIR into the tables of docs/benchmarks.md afterwards, on
# any machine. Each step has its own time limit and a failed step does not stop the next one.
#
#   bench/gpu_checks.sh [--cpu] SATURATE OUTDIR part1|part2|part3|sweep|stacks|oom|tune
#
# part1 (about 3.5 min): the machine and its software; saturate monitor beside nvidia-smi on a training GPU; the
#   Prometheus page beside nvidia-smi; probe of an unmodified ResNet-50 loop (bench/mfu_resnet50.py) with AMP off and
#   bf16, with --trace, while nvidia-smi logs power.draw every 100 ms (issue 22: joules per sample beside power.draw;
#   issue 11: MFU; issue 18: an unmodified loop on a GPU).
# part2 (about 5 min): probe of the same loop under torch.compile (issue 18); tune of the loop with no placeholder
#   (issues 18 and 21: its own flags), and the recommended command run as pasted, timed by its own step lines.
#
# part3 (about 8 min): the loop compiled without saturate (the reference, timed by its own lines) with the monitor
#   comparison near its end; probe of the compiled loop; tune and the pasted command; probes with AMP off and bf16
#   beside nvidia-smi's power log. Each step's files are packed into OUTDIR/NAME.tgz as soon as it ends.
#
# Issue 40's parts (bench/gpu/part_NAME.sh), each one call that ends by 7.5 minutes (PART_SECONDS: the steps'
# limits are cut to fit), each leaving two files in OUTDIR: NAME.tgz (everything, packed again after every step, so a
# part cut off keeps what it did) and NAME.txt (the console). Planned times, not measured ones:
# sweep (7.5 min, all of its time): 8 runs of a ResNet-18 on 32-px synthetic images (bench/gpu/small_model.py, a
#   fixed number of steps, about 8 s of training each alone), in this order: `saturate sweep` not told k, `saturate
#   sweep --mps`, k = 8, 4, 2 at once (xargs -P), and one after another last, so that the part's time goes to the
#   schedules that matter most (on an H200 each run was 10 s start-up + 8 s training, so sequential alone took
#   143 s); a schedule the time does not reach is skipped, and the report says so. Makespans, every run done exactly
#   once, nvidia-smi's memory beside the runs' own peaks and the journal's.
# stacks (about 5 min): probe of a Hugging Face Trainer (a 2-layer BERT from a config, synthetic tokens), a
#   Lightning Trainer, an `accelerate launch` script and a `torchrun --nproc_per_node 2` DDP job, each unmodified
#   and printing its own step times; a stack whose package is missing is skipped, and says so.
# oom (about 6 min): a sweep where run 4 needs more memory than is free beside another run (out of memory,
#   queued again, done once); tune's batch search against Lightning's BatchSizeFinder (power, binsearch) and
#   accelerate's find_executable_batch_size under one per-process memory cap, and each answer trained afresh.
# tune (about 6 min): tune of the unmodified ResNet-50 loop with a budget for CUDA's start and cuDNN's search, and
#   its recommended line run as pasted, timed by its own lines.
#
# --cpu: the CPU rehearsal of issue 40's parts (tests/e2e/gpu_checks_rehearsal.sh, about two minutes on the loaded
# 2-core machine): CPU torch (Debian's /usr/bin/python3), the NVML stand-in for the GPU (FAKE_NVML, else
# libfake_nvml.so beside SATURATE) with 8 GiB whose memory the runs use through bench/gpu/fake_device.py, saturate
# monitor in place of nvidia-smi, the MPS control stand-in (tests/fake_nvml/nvidia-cuda-mps-control), and small
# sizes. bench/gpu_report.py titles its sections "CPU rehearsal".
#
# PYTHON names the interpreter that has CUDA torch and torchvision (default python3; /usr/bin/python3 with --cpu).
# SATURATE is a binary built here and carried with its libraries, or, since issue 39, the wheel's: `pip install
# --target DIR dist/saturate-*.whl` into the GPU image's Python, then DIR/bin/saturate.
set -uo pipefail
CPU=0
if [ "${1:-}" = --cpu ]; then
  CPU=1
  shift
fi
if [ $# -ne 3 ]; then
  echo "usage: bench/gpu_checks.sh [--cpu] SATURATE OUTDIR part1|part2|part3|sweep|stacks|oom|tune" >&2
  exit 2
fi
SAT=$(realpath "$1")
OUT=$(realpath -m "$2")
PART=$3
here=$(cd "$(dirname "$0")/.." && pwd)
RESNET="$here/bench/mfu_resnet50.py"
mkdir -p "$OUT"
# A binary built on another distribution carries its libraries beside it (lib/, by RPATH); an older libstdc++ than
# the build's is the one thing RPATH cannot cover without replacing the children's, so it is taken only if needed.
"$SAT" --version >/dev/null 2>&1 || export LD_LIBRARY_PATH="$(dirname "$SAT")/fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TMPDIR=${TMPDIR:-/tmp}
# The Python side: the wheel's own when SATURATE was installed from it (`pip install --target DIR
# dist/saturate-*.whl`, then DIR/bin/saturate: no libraries to carry), else this checkout's, wherever the binary was
# built (run/environment.h HelperPythonDir).
[ -f "$(dirname "$SAT")/../share/saturate/python/sitecustomize.py" ] || export SATURATE_PYTHON_DIR="$here/python"
# nvidia-smi, or on the CPU saturate monitor reading the stand-in (it takes nvidia-smi's query flags).
SMI=(nvidia-smi)
if [ "$CPU" = 1 ]; then
  PY=${PYTHON:-/usr/bin/python3}
  SMI=("$SAT" monitor)
  export SATURATE_NVML_LIBRARY=${FAKE_NVML:-$(dirname "$SAT")/libfake_nvml.so}
  export FAKE_NVML_DEVICES=1 FAKE_NVML_MEMORY_MIB=8192
  export PATH="$here/tests/fake_nvml:$PATH"  # nvidia-cuda-mps-control's stand-in, for `saturate sweep --mps`
  [ -f "$SATURATE_NVML_LIBRARY" ] || { echo "--cpu needs the NVML stand-in: $SATURATE_NVML_LIBRARY" >&2; exit 2; }
else
  PY=${PYTHON:-python3}
fi

# Runs one step under its own time limit; its output goes to OUTDIR/NAME.txt and its tail to the console. Where
# PART_DEADLINE is set (a value of $SECONDS), the limit is cut to end by then, and a step with no time left is
# skipped, so that a part ends inside the device tool's limit however slow its steps were.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  if [ -n "${PART_DEADLINE:-}" ] && ((PART_DEADLINE - SECONDS < limit)); then
    limit=$((PART_DEADLINE - SECONDS))
    if ((limit < 5)); then
      echo "== $name skipped: the part's time is spent"
      echo "skipped: the part's time is spent" >"$OUT/$name.txt"
      return 0
    fi
  fi
  echo "== $name (limit ${limit}s) at $(date +%T)"
  timeout -k 10 "$limit" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "== exit $rc after $((SECONDS - t0)) s (limit ${limit}s)" >>"$OUT/$name.txt"
  echo "   rc=$rc after $((SECONDS - t0)) s"
  tail -n 6 "$OUT/$name.txt" | cut -c1-300 | sed 's/^/   | /'
  return 0
}

# nvidia-smi's own power and utilisation every 100 ms, each line prefixed with time.monotonic() (the clock of
# probe.json's steady windows), into $1 until stop_power_log.
power_pid=""
start_power_log() {
  { "${SMI[@]}" --query-gpu=power.draw,utilization.gpu,memory.used,clocks.sm --format=csv,noheader,nounits -lms 100 \
    2>"$1.err" &
    echo $! >"$1.pid"
    wait; } |
    "$PY" -u -c 'import sys, time
for line in sys.stdin:
    print("%.4f,%s" % (time.monotonic(), line.strip()), flush=True)' >"$1" 2>&1 &
  power_pid=$!
}
stop_power_log() {
  kill "$(cat "$1.pid" 2>/dev/null)" 2>/dev/null
  wait "$power_pid" 2>/dev/null
  rm -f "$1.pid" "$1.err"
}

# saturate monitor and nvidia-smi side by side on the same fields, 12 samples at 1 s each, started together after
# $1 seconds (while a probe trains); then one scrape of `monitor --serve` beside one nvidia-smi reading.
SIDE_FIELDS=timestamp,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,power.limit,temperature.gpu,clocks.sm,clocks.mem,pstate
side_by_side() {
  sleep "$1"
  timeout 20 "$SAT" monitor --query-gpu="$SIDE_FIELDS" --format=csv -lms 1000 -c 12 >"$OUT/side_saturate.csv" 2>&1 &
  timeout 12.5 nvidia-smi --query-gpu="$SIDE_FIELDS" --format=csv -lms 1000 >"$OUT/side_nvidia_smi.csv" 2>&1
  wait
  timeout 20 "$SAT" monitor --query-gpu=timestamp,utilization.gpu,gpm.sm_active,gpm.sm_occupancy,gpm.tensor_active,gpm.dram_bw_util,total_energy_consumption,power.draw --format=csv -lms 1000 -c 5 >"$OUT/gpm_saturate.csv" 2>&1
  "$SAT" monitor --serve 127.0.0.1:0 2>"$OUT/serve.err" >/dev/null &
  local server=$! url=""
  for _ in $(seq 50); do
    url=$(grep -o 'http://[^ ]*/metrics' "$OUT/serve.err" | head -1)
    [ -n "$url" ] && break
    sleep 0.1
  done
  sleep 2
  [ -n "$url" ] && "$PY" -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$url" >"$OUT/serve_page.txt" 2>&1
  nvidia-smi --query-gpu=utilization.gpu,memory.used,memory.free,power.draw,temperature.gpu,clocks.sm --format=csv >"$OUT/serve_nvidia_smi.csv" 2>&1
  kill -INT "$server" 2>/dev/null
  wait "$server" 2>/dev/null
}

# Probes the ResNet-50 loop as NAME with nvidia-smi's power log running; the rest are the loop's flags.
probe_resnet() {
  local name=$1 budget=$2 limit=$3
  shift 3
  start_power_log "$OUT/$name.power.csv"
  step "$name" "$limit" "$SAT" probe --budget "$budget" --trace --out "$OUT/$name" -- "$PY" "$RESNET" "$@"
  stop_power_log "$OUT/$name.power.csv"
}

# Tunes the loop with no placeholder (its own flags are found), then runs the recommended line as pasted, outside
# saturate (no SATURATE_ variable, no helper on the path), for its own step lines: tune_and_paste BUDGET LIMIT PASTE_S
# [TUNE FLAGS...]. The loop and its own flags: TUNE_LOOP.
TUNE_LOOP=("$PY" "$RESNET" --amp off --batch-size 64 --workers 0)
tune_and_paste() {
  step tune "$2" "$SAT" tune --budget "$1" "${@:4}" --out "$OUT/tune" --cache "$OUT/tune.db" -- "${TUNE_LOOP[@]}"
  local cmd
  cmd=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["recommended_command"])' "$OUT/tune/results.json" 2>/dev/null)
  echo "recommended: $cmd"
  if [ -n "$cmd" ]; then
    echo "$cmd" >"$OUT/pasted_command.txt"
    step pasted "$3" env -u PYTHONPATH bash -c "$cmd"
  fi
}

case "$PART" in
part1 | part2 | part3)
  [ "$CPU" = 0 ] || { echo "--cpu rehearses issue 40's parts only (sweep, stacks, oom, tune)" >&2; exit 2; }
  ;;
esac
case "$PART" in
sweep | stacks | oom | tune)
  # Work happens in WORK; OUTDIR gets WORK packed as PART.tgz after every step, and the console as PART.txt.
  FINAL=$OUT
  PART_DEADLINE=$((SECONDS + ${PART_SECONDS:-450}))
  WORK=$(mktemp -d "$TMPDIR/gpu-checks-$PART.XXXXXX")
  OUT=$WORK
  pack() { tar czf "$FINAL/$PART.tgz" -C "$WORK" --exclude=trace.json --exclude=.lock . 2>/dev/null; }
  echo "$PART" >"$WORK/part.txt"
  echo "$CPU" >"$WORK/cpu.txt"
  {
    date -u
    "${SMI[@]}" --query-gpu=name,memory.total --format=csv
    nproc
    "$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())'
    "$SAT" --version
  } >"$WORK/env.txt" 2>&1
  # shellcheck source=/dev/null
  source "$here/bench/gpu/part_$PART.sh" 2>&1 | tee "$FINAL/$PART.txt"
  pack
  rm -rf "$WORK"
  ls -la "$FINAL"
  exit 0
  ;;
part1)
  {
    date -u
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv
    nvidia-smi --help-query-gpu | grep -i -B1 -A3 energy
    uname -a
    getconf GNU_LIBC_VERSION  # the wheel installs where this is at least its tag's floor (README, "Install")
    nproc
    free -g
    command -v "$PY"
    "$PY" -c 'import sys, torch, torchvision; print(sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0)); print("torchvision", torchvision.__version__)'
    ldd "$SAT"
    "$SAT" --version
  } >"$OUT/env.txt" 2>&1
  cut -c1-200 "$OUT/env.txt" | grep -E 'NVIDIA|torch|Python|not found|saturate|^[0-9]+$' | head -20
  side_by_side 35 &
  side=$!
  probe_resnet probe_amp_off 75s 110 --amp off --batch-size 128
  wait "$side"
  probe_resnet probe_amp_bf16 75s 110 --amp bf16 --batch-size 128
  ;;
part2)
  probe_resnet probe_compile_bf16 110s 170 --amp bf16 --batch-size 128 --compile
  tune_and_paste 150s 180 35
  ;;
part3)
  # The checks again after the fixes the first two parts led to, each step's files packed into OUTDIR/NAME.tgz
  # as soon as it ends (the device tool returns only a few files, and a step cut off by the time limit must
  # not take the others with it). Work happens in WORK; OUTDIR gets the packs.
  WORK=${WORK:-$(mktemp -d)}
  pack() { tar czf "$OUT/$1.tgz" -C "$WORK" --exclude=trace.json "$@" 2>/dev/null; }
  SAVE_OUT=$OUT
  OUT=$WORK
  # The loop compiled without saturate, timed by its own step lines: the reference for the compiled probe; the
  # monitor comparison runs near its end, when it trains.
  ( sleep 55; side_by_side 0 ) &
  side=$!
  step plain_compile 80 env -u PYTHONPATH "$PY" "$RESNET" --amp bf16 --batch-size 128 --compile
  wait "$side"
  OUT=$SAVE_OUT pack plain_compile.txt side_saturate.csv side_nvidia_smi.csv gpm_saturate.csv serve_page.txt \
    serve_nvidia_smi.csv serve.err
  OUT=$WORK
  probe_resnet probe_compile_bf16 100s 150 --amp bf16 --batch-size 128 --compile
  OUT=$SAVE_OUT pack probe_compile_bf16 probe_compile_bf16.txt probe_compile_bf16.power.csv
  OUT=$WORK
  tune_and_paste 110s 140 25
  OUT=$SAVE_OUT pack tune tune.txt pasted_command.txt pasted.txt
  OUT=$WORK
  for amp in off bf16; do
    probe_resnet probe_amp_$amp 60s 90 --amp $amp --batch-size 128
    OUT=$SAVE_OUT pack probe_amp_$amp probe_amp_$amp.txt probe_amp_$amp.power.csv
    OUT=$WORK
  done
  OUT=$SAVE_OUT
  ;;
*)
  echo "usage: bench/gpu_checks.sh [--cpu] SATURATE OUTDIR part1|part2|part3|sweep|stacks|oom|tune" >&2
  exit 2
  ;;
esac
ls -la "$OUT" | head -40
