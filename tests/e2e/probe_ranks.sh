#!/usr/bin/env bash
# Distributed jobs that know nothing of saturate, probed through the automatic instrumentation: 2 DDP ranks on
# gloo started by torch.multiprocessing.spawn, by fork (as notebook launchers and Lightning's ddp_fork do), and by
# a launcher that starts one `python train.py` per rank with torchrun's environment. Each gets three measured
# stages, a named verdict, and a full-stage throughput within 5% of the ranks' own count (their printed
# timestamps, summed over ranks). A rank made slow to load is named as the straggler. A script that asks importlib
# for torch before importing it (transformers' way) is measured like the plain one.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
SCRIPTS="$SATURATE_SOURCE_DIR/tests/e2e/scripts"
DDP=("$SCRIPTS/ddp_train.py" --samples 8192 --width 512 --log-every 5)

# The ranks' own samples/s from their `rank R t=T samples=S` lines (stdout.log of the stage), over the stage's
# steady part as probe.json gives it on the same clock (time.monotonic): per rank, the samples between its last
# line before the window and its last line in it, over the time between them; summed over ranks.
own_rate() {
  "$PY" - "$1" "$2" <<'PY'
import collections, json, re, sys
stage = json.load(open(sys.argv[2]))["stages"]["full"]
t_from, t_to = stage["steady_from_t"], stage["steady_to_t"]
lines = collections.defaultdict(list)
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(?:rank (\d+) )?t=(\S+) (?:steps=\d+ )?samples=(\d+)", line)
    if m:
        lines[int(m.group(1) or 0)].append((float(m.group(2)), int(m.group(3))))
total = 0.0
for rank, points in lines.items():
    before = [p for p in points if p[0] <= t_from] or points[:1]
    inside = [p for p in points if p[0] <= t_to]
    (t0, s0), (t1, s1) = before[-1], inside[-1]
    total += (s1 - s0) / (t1 - t0)
print(total)
PY
}

# Probes `name` with the rest as the command; checks three stages, a verdict, and full against the own count.
probe_ranks() {
  local name=$1; shift
  probe_json "$name" --budget 60s -- "$@"
  local file="$WORK/$name.json"
  echo "$name: $(jq_py "$file" 'j["verdict"]')"
  jq_py "$file" 'all(j["stages"][s]["ran"] and j["stages"][s]["samples_per_s"] > 0 for s in ("full", "loader", "compute")) or sys.exit({s: j["stages"][s].get("skipped_why") for s in j["stages"]})' ||
    fail "$name: all three stages should measure"
  [ -n "$(jq_py "$file" 'j["verdict"]["bottleneck"] or ""')" ] || fail "$name: no verdict"
  [ "$(jq_py "$file" 'j["stages"]["full"]["world_size"]')" = 2 ] || fail "$name: world size should be 2"
  [ "$(jq_py "$file" 'len(j["stages"]["full"]["ranks"])')" = 2 ] || fail "$name: both ranks should be listed"
  jq_py "$file" 'j["stages"]["full"]["batch"]["global"] == 64 or sys.exit(j["stages"]["full"]["batch"])' ||
    fail "$name: the global batch is 2 x 32"
  local own got
  own=$(own_rate "$WORK/$name/full/stdout.log" "$file")
  got=$(jq_py "$file" 'j["stages"]["full"]["samples_per_s"]')
  echo "$name: probe full $got samples/s, the ranks' own count $own"
  "$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a / b - 1) > 0.05)" "$got" "$own" ||
    fail "$name: probe's full stage $got is not within 5% of the ranks' own $own"
}

probe_ranks spawn "$PY" "${DDP[@]}" --start spawn
probe_ranks fork "$PY" "${DDP[@]}" --start fork
probe_ranks launcher "$PY" "$SCRIPTS/launch_ranks.py" --nproc 2 "${DDP[@]}" --start env

# A straggler: rank 1 loads each batch 100 ms slower (a step takes ~20 ms on an idle machine); the others wait
# for it inside the step.
probe_json straggler --budget 30s -- "$PY" "$SCRIPTS/ddp_train.py" --samples 8192 --width 128 --start spawn --slow-rank 1 --slow-ms 100
expect_bottleneck "$WORK/straggler.json" straggler
[ "$(jq_py "$WORK/straggler.json" 'j["verdict"]["cause"]')" = "rank 1's data loading" ] ||
  fail "the straggler's cause should be rank 1's data loading"

# transformers-style import: find_spec("torch") first. Same verdict as plain, each full stage within 5% of the
# script's own count, and the two within the noise of back-to-back runs on a shared machine (20%).
for case in plain findspec; do
  probe_json "$case" --budget 25s -- "$PY" "$SCRIPTS/loops.py" --case "$case" --steps 1000000 --step-ms 5
  own=$(own_rate "$WORK/$case/full/stdout.log" "$WORK/$case.json")
  got=$(jq_py "$WORK/$case.json" 'j["stages"]["full"]["samples_per_s"]')
  echo "$case: probe full $got samples/s, the script's own count $own"
  "$PY" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a / b - 1) > 0.05)" "$got" "$own" ||
    fail "$case: probe's full stage $got is not within 5% of the script's own $own"
done
[ "$(jq_py "$WORK/plain.json" 'j["verdict"]["bottleneck"]')" = "$(jq_py "$WORK/findspec.json" 'j["verdict"]["bottleneck"]')" ] ||
  fail "find_spec first should not change the verdict"
"$PY" -c "
import json, sys
a = json.load(open('$WORK/plain.json'))['stages']['full']['samples_per_s']
b = json.load(open('$WORK/findspec.json'))['stages']['full']['samples_per_s']
sys.exit(abs(a / b - 1) > 0.2)" || fail "find_spec first should measure about the same throughput as plain"
echo ok
