#!/usr/bin/env bash
# With GPUs (the NVML stand-in: two fake H200s), every GPU is a device: runs are spread over them, each run sees
# only its GPU (CUDA_VISIBLE_DEVICES in NVML's PCI order), -i picks GPUs, and --mps without NVIDIA's MPS control
# program is an error that names it. The summary's GPU-hours (held, and with one GPU per attempt) match the
# journal's attempt times, and --price-per-hour gives them in money. The energy per attempt adds up to the stand-in's
# power over the time its GPU held attempts.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=2

cat >"$WORK/which_gpu.py" <<'PY'
import os, sys, time
import saturate
for _ in saturate.track(range(20)):
    time.sleep(0.05)
print(f"gpu={os.environ['CUDA_VISIBLE_DEVICES']} order={os.environ['CUDA_DEVICE_ORDER']}")
PY

journal="$WORK/gpus.journal"
"$SATURATE" sweep --journal "$journal" --warmup 0.3s --window 0.3s --price-per-hour 2.50 --grid i=1,2,3,4 \
  -- "$PY" "$WORK/which_gpu.py" --i '{i}' >"$WORK/out" 2>"$WORK/err"
cat "$WORK/err" "$WORK/out"
expect_contains "$(cat "$WORK/out")" "GPU-hours: "
expect_contains "$(cat "$WORK/out")" "At 2.50 per GPU-hour: "
expect_contains "$(cat "$WORK/out")" "Energy: "
expect_contains "$(cat "$WORK/out")" "J/sample"
# The GPU-hours from the journal's own rows, computed here: per GPU the union of its attempts' intervals. Energy:
# the stand-in's GPU i draws 250 + i W, so the joules of the attempts on a GPU add up to that power times the same
# union, and each run's joules per sample is its joules over the samples it reported (20 steps of 1).
"$SATURATE" sweep status --journal "$journal" --price-per-hour 2.50 --json >"$WORK/status.json"
"$SATURATE" sweep export --json --journal "$journal" >"$WORK/export.json"
journal_query "$journal" "SELECT gpu_index, started_unix, ended_unix, energy_j FROM attempts" >"$WORK/attempts"
"$PY" - "$WORK/status.json" "$WORK/attempts" "$WORK/export.json" <<'PY'
import json, sys
status = json.load(open(sys.argv[1]))
hours, energy = status["gpu_hours"], status["energy"]
rows = [line.split("|") for line in open(sys.argv[2]).read().split()]
runs = json.load(open(sys.argv[3]))["runs"]
by_gpu, alone = {}, 0.0
for gpu, start, end, joules in rows:
    assert joules, f"an attempt on GPU {gpu} has no energy"
    by_gpu.setdefault(int(gpu), []).append((float(start), float(end), float(joules)))
    alone += float(end) - float(start)
held, total = 0.0, 0.0
for gpu, attempts in by_gpu.items():
    spans = sorted((s, e) for s, e, _ in attempts)
    gpu_held, (lo, hi) = 0.0, spans[0]
    for s, e in spans[1:]:
        if s > hi:
            gpu_held += hi - lo
            lo = s
        hi = max(hi, e)
    gpu_held += hi - lo
    held += gpu_held
    joules = sum(j for _, _, j in attempts)
    expected = (250 + gpu) * gpu_held
    assert abs(joules - expected) < 0.02 * expected, (gpu, joules, expected)
    assert abs(energy["by_gpu"][str(gpu)] - joules) < 1e-6 * joules, (energy, joules)
    total += joules
assert hours["attempts"] == len(rows) == 4, hours
assert hours["gpus"] == 2, hours
assert abs(hours["gpu_hours_held"] - held / 3600) < 1e-9, (hours, held / 3600)
assert abs(hours["gpu_hours_one_per_attempt"] - alone / 3600) < 1e-9, (hours, alone / 3600)
assert abs(hours["cost_held"] - 2.5 * held / 3600) < 1e-9, hours
assert energy["attempts"] == 4 and energy["attempts_without_reading"] == 0, energy
assert abs(energy["joules"] - total) < 1e-6 * total, (energy, total)
for run in runs:
    assert run["samples"] == 20, run
    assert abs(run["joules_per_sample"] - run["energy_j"] / 20) < 1e-9, run
print("ok: GPU-hours held", round(held / 3600, 6), "one per attempt", round(alone / 3600, 6))
print("ok: energy", round(total, 1), "J, each GPU's attempts = its power x the time they held it")
PY
expect_exit 2 "$SATURATE" sweep status --journal "$journal" --price-per-hour -1
expect_contains "$ERR" "--price-per-hour -1"
# The price from the spec (saturate.price_per_gpu_hour), for the sweep and for its status; the flag wins.
printf 'program: %s\nmethod: grid\nparameters:\n  i: {values: [1, 2]}\ncommand: [%s, "${program}", "${args}"]\nsaturate:\n  price_per_gpu_hour: 1.25\n' \
  "$WORK/which_gpu.py" "$PY" >"$WORK/priced.yaml"
out=$("$SATURATE" sweep -q --warmup 0.3s --window 0.3s "$WORK/priced.yaml" 2>&1)
expect_contains "$out" "At 1.25 per GPU-hour: "
expect_contains "$("$SATURATE" sweep status "$WORK/priced.yaml")" "At 1.25 per GPU-hour: "
expect_contains "$("$SATURATE" sweep status "$WORK/priced.yaml" --price-per-hour 3)" "At 3.00 per GPU-hour: "
# A spec that no longer reads costs status its price only.
echo "saturate: {price_per_gpu_hour: -1}" >>"$WORK/priced.yaml"
out=$("$SATURATE" sweep status "$WORK/priced.yaml" 2>&1)
expect_contains "$out" "GPU-hours: "
expect_contains "$out" "saturate: note: no price from the spec: "
expect_contains "$(cat "$WORK/err")" "on GPUs"
expect_contains "$(cat "$WORK/err")" "on gpu0"
expect_contains "$(cat "$WORK/err")" "on gpu1"
# Each run saw exactly the GPU the journal says it ran on.
while IFS='|' read -r gpu log_dir; do
  grep -qx "gpu=$gpu order=PCI_BUS_ID" "$log_dir/stdout.log" || fail "run on GPU $gpu saw: $(cat "$log_dir/stdout.log")"
done < <(journal_query "$journal" "SELECT gpu_index, log_dir FROM attempts")
[ "$(journal_query "$journal" "SELECT count(DISTINCT gpu_index) FROM attempts")" = 2 ] || fail "both GPUs should be used"

"$SATURATE" sweep --journal "$WORK/one.journal" -i 1 --warmup 0.3s --window 0.3s --grid i=1,2 \
  -- "$PY" "$WORK/which_gpu.py" --i '{i}' >/dev/null 2>&1
[ "$(journal_query "$WORK/one.journal" "SELECT DISTINCT gpu_index FROM attempts")" = 1 ] || fail "-i 1 should use GPU 1 only"
expect_exit 2 "$SATURATE" sweep -i 5 --grid i=1 -- true '{i}'
expect_contains "$ERR" "out of range"

mkdir "$WORK/empty"
PATH="$WORK/empty" expect_exit 1 "$SATURATE" sweep --mps --journal "$WORK/mps.journal" --grid i=1 -- /bin/true '{i}'
expect_contains "$ERR" "--mps needs NVIDIA's nvidia-cuda-mps-control"
echo PASS
