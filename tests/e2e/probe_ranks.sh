#!/usr/bin/env bash
# Distributed jobs that know nothing of saturate, probed through the automatic instrumentation: 2 DDP ranks on
# gloo started by torch.multiprocessing.spawn (the ranks children of the script), and by a launcher that starts one
# `python train.py` per rank with torchrun's environment (grandchildren of the command). Each gets three measured
# stages, a named verdict, and a full-stage throughput within 5% of the ranks' own count (their printed
# timestamps, summed over ranks). In the spawned job rank 1 is made slow to load, and is named as the straggler.
# Ranks started by fork (as notebook launchers and Lightning's ddp_fork do), forkserver, or a script that reruns
# itself per rank report each for itself with exact counts (tests/python/test_launch.py RanksTest); saturate merges
# ranks by their messages alone, whatever started them (src/core/stage_rules_test.cc, src/probe/ranks_test.cc). (A
# script that asks importlib for torch before importing it, transformers' way, is counted exactly as the plain one
# by tests/python/test_launch.py.)
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
SCRIPTS="$SATURATE_SOURCE_DIR/tests/e2e/scripts"
DDP=("$SCRIPTS/ddp_train.py" --samples 8192 --width 512 --log-every 5)


# Probes `name` with the rest as the command; checks three stages, a verdict, and full against the own count.
# 90 s: each stage starts two ranks and a launcher, which on a CI machine running another test alongside took a
# 13-s compute share whole before the first step (probe converges and stops well before it on a quiet one).
# --target 0.05: two ranks on two cores step unevenly, and a ±2% compute estimate took the whole 90 s; nothing here
# rests on an estimate's width (the full stage is held to the ranks' own count over the same window): 35-64 s.
probe_ranks() {
  local name=$1; shift
  probe_json "$name" --budget 90s --target 0.05 -- "$@"
  local file="$WORK/$name.json"
  expect_three_stages_and_verdict "$name"
  [ "$(jq_py "$file" 'j["stages"]["full"]["world_size"]')" = 2 ] || fail "$name: world size should be 2"
  [ "$(jq_py "$file" 'len(j["stages"]["full"]["ranks"])')" = 2 ] || fail "$name: both ranks should be listed"
  jq_py "$file" 'j["stages"]["full"]["batch"]["global"] == 64 or sys.exit(j["stages"]["full"]["batch"])' ||
    fail "$name: the global batch is 2 x 32"
  expect_full_near_own "$name"
}

# The straggler: rank 1 loads each batch 100 ms slower (a step takes ~20 ms on an idle machine); the other waits
# for it inside the step. A line per step (--log-every 1), so that the ranks' own count is read to a step's ~0.12 s.
# The width of the launcher's job: a narrower model's compute stage (13,000 samples/s) kept moving to the budget.
probe_ranks spawn "$PY" "$SCRIPTS/ddp_train.py" --samples 8192 --width 512 --log-every 1 --start spawn \
  --slow-rank 1 --slow-ms 100
expect_bottleneck "$WORK/spawn.json" straggler
[ "$(jq_py "$WORK/spawn.json" 'j["verdict"]["cause"]')" = "rank 1's data loading" ] ||
  fail "the straggler's cause should be rank 1's data loading"

probe_ranks launcher "$PY" "$SCRIPTS/launch_ranks.py" --nproc 2 "${DDP[@]}" --start env

echo ok
