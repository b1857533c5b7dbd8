#!/usr/bin/env bash
# `saturate sweep --slurm` sizes GPU runs into Slurm shards: on a one-node Slurm whose node declares two GPUs cut
# into 16 shards (fake device files, gres.conf AutoDetect=off; this machine has no GPU), the shape's probe asks
# for a whole GPU (--gres=gpu:1) and, once measured, the other runs ask for the shards that their GPU memory (with
# the margin) and the GPU utilisation the probe had alone need; a run that runs out of GPU memory under its shards
# is resubmitted asking for more, without counting as a failure; the report shows the GPU-hours saved against one
# GPU per run. The GPU itself is stood in for as elsewhere: NVML is tests/fake_nvml (two 140 GiB GPUs), and the
# trainer's CUDA allocator reports 20 GiB through the helper's own `mem` path (a stand-in torch.cuda in
# sys.modules).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
source "$(dirname "$0")/slurm_lib.bash"
start_slurm 8 "gpu:2,shard:16"
export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=2 FAKE_NVML_UTIL=20

cat >"$WORK/gpu_train.py" <<'PY'
import argparse, os, sys, time, types
# The CUDA allocator of a run holding 20 GiB, as torch.cuda reports it (no GPU on this machine).
cuda = types.SimpleNamespace(is_initialized=lambda: True, memory_allocated=lambda: 18 << 30,
                             memory_reserved=lambda: 20 << 30, max_memory_allocated=lambda: 20 << 30)
sys.modules["torch"] = types.SimpleNamespace(cuda=cuda)
import saturate
p = argparse.ArgumentParser()
p.add_argument("--i", type=int, required=True)
p.add_argument("--oom-marker", required=True)
a = p.parse_args()
# The first run on shards runs out of GPU memory once, as a run whose neighbours grew would.
if os.environ.get("SLURM_SHARDS_ON_NODE"):
    try:
        os.close(os.open(a.oom_marker, os.O_CREAT | os.O_EXCL))
        print("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB", file=sys.stderr)
        sys.exit(1)
    except FileExistsError:
        pass
for _ in saturate.track(range(40)):
    time.sleep(0.05)
print(f"loss={1.0 / a.i:.4f}", flush=True)
PY

cat >"$WORK/g.yaml" <<YAML
program: $WORK/gpu_train.py
method: grid
command: ["$PY", "\${program}", "\${args}", --oom-marker, "$WORK/oom-once"]
parameters:
  i: {values: [1, 2, 3, 4]}
saturate:
  backend: slurm
  auto: false
  metric_pattern: 'loss=(?P<loss>[0-9.]+)'
  slurm:
    share: shard
    cpus: 1
    margin: 0.25
    poll: 300ms
YAML
start=$SECONDS
slurm_sweep g "$WORK/g.yaml"
expect_contains "$(cat "$WORK/g.out")" "4 done, 0 failed"
expect_contains "$(cat "$WORK/g.err")" "out of memory under a sized request"
journal="$WORK/g.journal"
jobs=$(journal_query "$journal" "SELECT slurm_job FROM attempts ORDER BY id")
first=$(echo "$jobs" | head -n1)
expect_contains "$(scontrol -o show job "$first")" "gpu:1"
# 20 GiB x 1.25 of a 140 GiB GPU is 0.18 of it, and the probe kept its GPU 20% busy alone (the stand-in NVML's
# utilisation): 0.2 of its 8 shards, 2 shards. The run that ran out of memory asks again with twice the memory
# share: 0.36, 3 shards.
[ "$(echo "$jobs" | wc -l)" = 5 ] || fail "expected 5 jobs (4 runs, one out-of-memory retry): $jobs"
oom=$(journal_query "$journal" "SELECT run_key, attempt_no FROM attempts WHERE exit_class = 'gpu_oom'")
[ -n "$oom" ] || fail "no attempt ran out of memory"
oom_key=${oom%%|*}
[ "$(journal_query "$journal" "SELECT state, attempts, failures FROM runs WHERE key = '$oom_key'")" = "done|2|0" ] \
  || fail "the out-of-memory run should be done on its second attempt without a failure"
for job in $(journal_query "$journal" "SELECT slurm_job FROM attempts WHERE attempt_no = 1 AND id > 1"); do
  expect_contains "$(scontrol -o show job "$job")" "TresPerNode=gres:shard:2"
done
retry=$(journal_query "$journal" "SELECT slurm_job, slurm_request FROM attempts WHERE run_key = '$oom_key' AND attempt_no = 2")
expect_contains "$retry" '"gres":"shard:3"'
expect_contains "$retry" '"oom_bumps":1'
expect_contains "$(scontrol -o show job "${retry%%|*}")" "TresPerNode=gres:shard:3"
expect_contains "$(cat "$WORK/g.out")" "with one GPU per run"
saved=$("$SATURATE" sweep status --json "$WORK/g.yaml" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["slurm"]["gpu_hours_saved"] > 0)')
[ "$saved" = True ] || fail "no GPU-hours saved"
# Energy on the node: a job is charged its GPU's energy over the whole job, times the share of the GPU it asked for
# (1 for gpu:1, 2 or 3 of 8 shards); the stand-in's GPU 0 draws 250 W, and the run's own duration (the runner's
# clock, in outcome.json) is the least the job lasted.
journal_query "$journal" "SELECT log_dir, energy_j FROM attempts" >"$WORK/energy"
"$PY" - "$WORK/energy" <<'PY'
import json, sys
for line in open(sys.argv[1]).read().split():
    log_dir, joules = line.split("|")
    job = json.load(open(f"{log_dir}/job.json"))
    outcome = json.load(open(f"{log_dir}/outcome.json"))
    request = job["request"]
    share = 1.0 if request.get("gpus", 0) > 0 else request["gpu_fraction"]
    assert joules, f"{log_dir}: no energy"
    seconds = float(joules) / (250 * share)
    assert outcome["measurements"]["energy_j"] == float(joules), (outcome, joules)
    assert 0.98 * outcome["duration_s"] <= seconds <= outcome["duration_s"] + 0.5, (log_dir, seconds, outcome["duration_s"], share)
print("ok: each job's energy is 250 W x its GPU share x its duration")
PY
expect_contains "$("$SATURATE" sweep status "$WORK/g.yaml")" "Energy: "

# Asking for a GRES the partition does not define is an error that says what it has.
sed -i 's/share: shard/share: mps/' "$WORK/g.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/g.yaml" --journal "$WORK/mps.journal"
expect_contains "$ERR" "defines no mps GRES (its nodes have gpu:2, shard:16, mps:0)"
echo "PASS in $((SECONDS - start)) s"
