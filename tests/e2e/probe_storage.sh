#!/usr/bin/env bash
# Fetch stalls told from prep stalls (issue 29, part 1). The loader of tests/e2e/scripts/read_files.py reads one 4-KiB
# file per sample and works on it for about 5 ms of CPU (--prep 700, as decoding and transforms do), with no workers:
#  (a) from a slow FUSE mount (lib/slowfs.py, 20 ms a read): probe names storage as the narrowest pipe, on
#      fuse.slowfs, with the loader's own files (never the script) and most of the loader's time fetching; it measures
#      the local-copy what-if on a sample of those files;
#      the what-if is within 30% below and 10% above the loader's own rate on a real local copy (in the page cache),
#      where the loader on the mount runs 5x slower: it reads low by its known limit (the loader's CPU a sample on
#      the mount, as the sampler counts it, exceeds the copy's: what-if / truth 0.80-0.94 over ten runs here since
#      the loaders were pinned, docs/benchmarks.md), and a what-if above the truth would send users copying for
#      nothing.
#      The truth is timed by the script itself right after (a): a count made outside saturate, on the same CPU.
#      Every loader of this test runs on one CPU, and saturate and the slow mount's daemon on another: the what-if is
#      the loader's rate with a core of its own. This shared machine's CPUs change speed on their own (one ran the
#      same work at 4.7 ms a sample while the other took 6.7, and each switches between about 200 and 130 samples/s
#      of this loader for tens of seconds; docs/benchmarks.md), so the script times a fixed piece of CPU work now and
#      then (--speed-every) in both runs, and the truth is scaled to the speed the CPU had while probe's loader stage
#      measured; the what-if passes within the bound of the truth scaled so or as timed (within_bound: on a machine
#      busy with other builds the scaling alone misled by up to 44%);
#  (d) the same loader on the same files behind the slow mount with direct I/O (slowfs --direct-io, as FUSE mounts of
#      cloud buckets commonly run): its reader waits in the FUSE request in state S, never D, so only the storage
#      rule's other evidence shows the wait (its 2% of CPU against its data wait, the cold reads of its files, the
#      FUSE mount): probe names storage, with the cold reads as the basis of the fetch share, and the what-if is held
#      to (a)'s bound against the truth timed again right after (d), as for (a);
#  (b), (e) and (c), which name a filesystem without comparing two runs, are probe_storage_kinds.sh: this test holds
#      both cores (its what-ifs are checked against a second run on a pinned core), that one only the lock.
# Where FUSE cannot mount here the test is skipped (77) saying why.
#
# What this relies on of the implementation (docs/internals/probe.md, "Fetch stalls and prep stalls"):
#  - probe.json's verdict.bottleneck "storage" when fetch stalls bound the loader, and verdict.cause naming the
#    filesystem type; data_locations[0] the mount holding the data files;
#  - storage.data_files {source "helper", sample [paths]}, storage.loader_time.loader {fetch, prep, basis},
#    storage.local_copy.samples_per_s (the what-if's headline rate), stages.loader.samples_per_s.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/lib/mounts.bash"
cd "$WORK"
source "$(dirname "$0")/storage_lib.bash"
t0=$SECONDS
# The first CPU this test may use: the loaders (the probed command and the truth) run there, and nowhere else;
# saturate and the slow mount's daemon on the others (on the same one where there is no other).
read -r CPU OTHERS < <("$PY" -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], ",".join(map(str, c[1:] or c)))')
PIN=(taskset -c "$CPU")
PROBE_PREFIX="taskset -c $OTHERS"
SLOWFS_PREFIX="taskset -c $OTHERS"

# The loader on the local copy without saturate, per core it got (the what-if gives each loading process a core):
# samples over the loop's CPU time, or over its wall time where it used more than a core. 600 samples (about 4 s):
# the rate is CPU time over a fixed piece of work, and 1,200 took 8 s a case of the test's both cores without
# bringing the what-ifs nearer the bound (what-if / truth 0.82-0.95 with 600 over three runs, 0.77-1.09 with 1,200 in
# the same sitting; docs/benchmarks.md, suite-time4).
local_copy_rate() {
  "${PIN[@]}" "$PY" "$READ" --data "$WORK/local-copy" --samples 600 --prep 700 --speed-every "${SPEED_EVERY:-32}" \
    >"$WORK/truth.log"
  "$PY" - "$WORK/truth.log" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
n, wall = re.search(r"^read (\d+) samples in ([0-9.]+) s$", text, re.M).groups()
cpu = re.search(r"^loop cpu ([0-9.]+) s$", text, re.M).group(1)
print(int(n) / max(1e-6, min(float(wall), float(cpu))))
PYEOF
}

# The median of the speed probes in a run's output (the first left out: it warms up); given a probe.json too, only
# those inside its loader stage's steady part, where there are at least three.
# Usage: median_speed OUTPUT [PROBE_JSON]
median_speed() {
  "$PY" - "$@" <<'PYEOF'
import json, re, statistics, sys
text = open(sys.argv[1], errors="replace").read()
probes = [(float(t), float(ms)) for t, ms in re.findall(r"^speed t=([0-9.]+) ms=([0-9.]+)$", text, re.M)[1:]]
if len(sys.argv) > 2:
    stage = json.load(open(sys.argv[2]))["stages"]["loader"]
    steady = [p for p in probes if stage["steady_from_t"] <= p[0] <= stage["steady_to_t"]]
    probes = steady if len(steady) >= 3 else probes
print(statistics.median(ms for _, ms in probes))
PYEOF
}

# Whether the what-if ($1) is within -30%/+10% of the local copy's rate: scaled to the loader stage's CPU speed ($2),
# or as timed ($3). The scaling alone misleads on a machine busy with other work: a loader idle most of its time (it
# waits on the mount) had speed probes 13-44% slower than the truth's where its CPU a sample showed ~10% more, and the
# what-if came out 0.78-1.24 of the scaled truth over eighteen runs beside other builds (over 1.1 in six), and
# 0.84-1.05 of the truth as timed (docs/benchmarks.md). A what-if really off by more than the bound is off on both.
within_bound() {
  "$PY" -c 'import sys; e, m, t = map(float, sys.argv[1:]); sys.exit(not any(0.7 <= e / x <= 1.1 for x in (m, t)))' "$@"
}

# The what-if of the probe named $1 (its JSON and loader stage log under $WORK), case $2, against the loader's own
# rate on the local copy timed now, right after the probe; prints both, fails past the bound.
check_what_if() {
  local name=$1 case=$2 estimate truth truth_speed probe_speed measured
  estimate=$(jq_py "$WORK/$name.json" 'j["storage"]["local_copy"]["samples_per_s"]') ||
    fail "$case no local-copy what-if: $(jq_py "$WORK/$name.json" 'j["storage"]["local_copy_why_not"]')"
  truth=$(local_copy_rate) || fail "$case the loader alone on the local copy did not run: $(cat "$WORK/truth.log")"
  truth_speed=$(median_speed "$WORK/truth.log") || fail "$case no speed probes in the truth's output"
  probe_speed=$(median_speed "$WORK/$name/loader/stdout.log" "$WORK/$name.json") ||
    fail "$case no speed probes in the loader stage's output"
  measured=$("$PY" -c 'import sys; r, t, p = map(float, sys.argv[1:]); print(r * t / p)' "$truth" "$truth_speed" \
    "$probe_speed")
  echo "$case $((SECONDS - t0)) s: what-if $estimate samples/s; the loader's own rate on a local copy $truth per core" \
    "with the CPU at $truth_speed ms a round, $measured at the loader stage's $probe_speed"
  within_bound "$estimate" "$measured" "$truth" ||
    fail "$case the what-if's $estimate samples/s is not within -30%/+10% of the local copy's $truth per core" \
      "($measured scaled)"
}

# (a) the slow mount
slowfs_mount "$WORK/src" "$WORK/mnt-slow" 20
probe_json slow --budget 30s -- "${PIN[@]}" "$PY" "$READ" --data "$WORK/mnt-slow" --samples 100000000 --prep 700 \
  --speed-every 32
check_what_if slow "(a)"
expect_bottleneck "$WORK/slow.json" storage
jq_py "$WORK/slow.json" '"fuse.slowfs" in j["verdict"]["cause"] or sys.exit("the cause does not name fuse.slowfs: " + j["verdict"]["cause"])' ||
  fail "(a) the verdict should name the slow filesystem"
jq_py "$WORK/slow.json" 'j["storage"]["data_files"]["source"] == "helper" or sys.exit(j["storage"]["data_files"])' ||
  fail "(a) the data files should come from the helper's file watch"
jq_py "$WORK/slow.json" 'all("/mnt-slow/f" in p and p.endswith(".bin") for p in j["storage"]["data_files"]["sample"]) and len(j["storage"]["data_files"]["sample"]) > 1 or sys.exit(j["storage"]["data_files"]["sample"])' >/dev/null ||
  fail "(a) the data files should be the loader's, under $WORK/mnt-slow"
jq_py "$WORK/slow.json" 'j["data_locations"][0]["fs_type"] == "fuse.slowfs" and j["data_locations"][0]["file_count"] > 1 or sys.exit(j["data_locations"])' ||
  fail "(a) data: should be the slow mount's files"
grep -q "read_files.py" <(jq_py "$WORK/slow.json" 'j["data_locations"]') && fail "(a) the script was reported as data"
jq_py "$WORK/slow.json" 'j["storage"]["loader_time"]["loader"]["fetch"] > j["storage"]["loader_time"]["loader"]["prep"] or sys.exit(j["storage"]["loader_time"])' ||
  fail "(a) the loader should spend more of its time fetching than preparing"
jq_py "$WORK/slow.json" 'j["storage"]["loader_time"]["loader"]["prep"] <= j["stages"]["loader"]["telemetry"]["tree_cpu_pct"]["mean"] / 100 + 1e-9 or sys.exit(j["storage"]["loader_time"])' ||
  fail "(a) prep is never more than the CPU share the sampler saw"
# Only torch.compile's cache may be there: the runner points TORCHINDUCTOR_CACHE_DIR at saturate's cache folder
# where <TMPDIR>/torchinductor_<user> is not already this user's (a fresh machine), and makes it (run/runner.cc).
[ -z "$(ls -A "$XDG_CACHE_HOME/saturate" 2>/dev/null | grep -vx torchinductor)" ] ||
  fail "(a) the what-if left its copy: $(ls -R "$XDG_CACHE_HOME")"

# (d) the slow mount with direct I/O: readers in state S
slowfs_mount "$WORK/src" "$WORK/mnt-direct" 20 0 --direct-io
probe_json direct --budget 30s -- "${PIN[@]}" "$PY" "$READ" --data "$WORK/mnt-direct" --samples 100000000 --prep 700 \
  --speed-every 8
expect_bottleneck "$WORK/direct.json" storage
jq_py "$WORK/direct.json" '"fuse.slowfs" in j["verdict"]["cause"] or sys.exit(j["verdict"]["cause"])' ||
  fail "(d) the verdict should name the slow filesystem"
jq_py "$WORK/direct.json" 'j["storage"]["loader_time"]["loader"]["basis"] == "cold_reads" and j["storage"]["loader_time"]["loader"]["fetch"] > j["storage"]["loader_time"]["loader"]["prep"] or sys.exit(j["storage"]["loader_time"])' ||
  fail "(d) the cold reads should show the loader fetching more than preparing"
# More speed probes here (--speed-every 8: 12-14 in the loader stage's steady part, where 32 gave 3).
SPEED_EVERY=8
check_what_if direct "(d)"

echo ok
