#!/usr/bin/env bash
# `saturate sweep --slurm` against a real one-node Slurm started by this test (tests/e2e/slurm_lib.bash): an
# 8-run sweep completes with the right results; the shape's probe asks for the spec's request and, once it is
# measured, the other jobs ask for right-sized --cpus-per-task and --mem (read back with scontrol); a run that
# fails its first attempt is resubmitted; `kill -9` of saturate midway and `--resume` end with every run done
# exactly once (the jobs went on without saturate); --cancel on Ctrl-C cancels the jobs and --resume finishes
# them; a journal locked past SQLite's busy timeout stops the sweep with its jobs left to Slurm and --resume
# adopts them; status and export read the journal as for a local sweep; a missing sbatch, a partition the cluster lacks,
# an sbatch rejection and a sweep folder the nodes cannot see are errors that say so.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
source "$(dirname "$0")/slurm_lib.bash"
# Without Slurm's commands on PATH, the error names them (before any Slurm is started).
mkdir "$WORK/empty"
printf 'program: x.py\nmethod: grid\nparameters:\n  i: {values: [1]}\nsaturate: {backend: slurm}\n' >"$WORK/nopath.yaml"
PATH="$WORK/empty" expect_exit 2 "$SATURATE" sweep "$WORK/nopath.yaml"
expect_contains "$ERR" "the Slurm backend needs Slurm's sbatch on PATH"
start_slurm 8

# A trainer that reports through `import saturate`; with --fail-once it fails its first attempt.
cat >"$WORK/slurm_train.py" <<'PY'
import argparse, os, sys, time
import saturate
p = argparse.ArgumentParser()
p.add_argument("--i", type=int, required=True)
p.add_argument("--seconds", type=float, default=3)
p.add_argument("--fail-once", default="")
p.add_argument("--done", required=True)
a = p.parse_args()
if a.fail_once and not os.path.exists(a.fail_once):
    open(a.fail_once, "w").close()
    print(f"RuntimeError: worker {os.getpid()} lost its data shard", file=sys.stderr)
    sys.exit(1)
for step in saturate.track(range(int(a.seconds / 0.05))):
    time.sleep(0.05)
print(f"epoch 1 loss={1.0 / a.i:.4f}", flush=True)
with open(a.done, "a") as f:
    f.write(f"{a.i}\n")
PY

spec() {  # $1: the spec file, $2: the done log, $3: more of the command ("--fail-once FILE" or empty)
  cat >"$1" <<YAML
program: $WORK/slurm_train.py
method: grid
command: ["$PY", "\${program}", "\${args}", --done, "$2"$(for a in $3; do printf ', "%s"' "$a"; done)]
metric: {name: loss, goal: minimize}
parameters:
  i: {values: [1, 2, 3, 4, 5, 6, 7, 8]}
saturate:
  backend: slurm
  metric_pattern: 'loss=(?P<loss>[0-9.]+)'
  retries: 2
  slurm:
    cpus: 2
    mem: 1G
    margin: 0.5
    poll: 300ms
YAML
}

# The sweep; the first run to start fails its first attempt.
spec "$WORK/s.yaml" "$WORK/done.log" "--fail-once $WORK/failed-once"
start=$SECONDS
slurm_sweep s "$WORK/s.yaml"
echo "first sweep: $((SECONDS - start)) s"
journal="$WORK/s.journal"
expect_contains "$(cat "$WORK/s.out")" "8 done, 0 failed"
expect_contains "$(cat "$WORK/s.err")" "on Slurm"
[ "$(journal_query "$journal" "SELECT count(*) FROM runs WHERE state = 'done'")" = 8 ] || fail "not all runs done"
# Every run's work was done once; the run that failed first was resubmitted and finished on its second attempt.
[ "$(sort -n "$WORK/done.log" | paste -sd,)" = "1,2,3,4,5,6,7,8" ] || fail "done.log: $(cat "$WORK/done.log")"
attempts=$(journal_query "$journal" "SELECT exit_class FROM attempts ORDER BY id" | paste -sd,)
[ "$(journal_query "$journal" "SELECT count(*) FROM attempts WHERE exit_class = 'failed'")" = 1 ] \
  || fail "attempts: $attempts"
[ "$(journal_query "$journal" "SELECT count(*) FROM attempts WHERE exit_class = 'finished'")" = 8 ] \
  || fail "attempts: $attempts"
failed_run=$(journal_query "$journal" "SELECT run_key FROM attempts WHERE exit_class = 'failed'")
[ "$(journal_query "$journal" "SELECT attempts, state FROM runs WHERE key = '$failed_run'")" = "2|done" ] \
  || fail "the failed run was not resubmitted"
# Every attempt carries its Slurm job id; the metric came back from the nodes.
[ "$(journal_query "$journal" "SELECT count(*) FROM attempts WHERE slurm_job = ''")" = 0 ] || fail "attempts without a job id"
[ "$(status_value "$journal" 'j["runs"][0]["params"]["i"]')" = 8 ] || fail "best run should be i=8"

# Right-sizing: the first job asked for the spec's 2 CPUs and 1 GiB; once the shape was measured, the others
# asked for what it used with the margin (an idle trainer: 1 CPU, far less memory). Read back from Slurm itself.
jobs=$(journal_query "$journal" "SELECT slurm_job FROM attempts ORDER BY id")
first=$(echo "$jobs" | head -n1)
probe=$(scontrol -o show job "$first")
expect_contains "$probe" "NumCPUs=2"
expect_contains "$probe" "MinMemoryNode=1G"
sized=0
for job in $(echo "$jobs" | tail -n +2); do
  info=$(scontrol -o show job "$job")
  if [[ "$info" == *"NumCPUs=1 "* ]]; then
    mem=$(echo "$info" | grep -o 'MinMemoryNode=[0-9]*M' | grep -o '[0-9]*')
    [ -n "$mem" ] && [ "$mem" -lt 1024 ] || fail "sized job $job asked for memory: $info"
    sized=$((sized + 1))
  fi
done
[ "$sized" -ge 6 ] || fail "expected right-sized jobs after the probe, got $sized of $(echo "$jobs" | wc -l): $jobs"
status=$("$SATURATE" sweep status "$WORK/s.yaml")
echo "$status"
expect_contains "$status" "runs asked for a request sized from measurement"
expect_contains "$status" "CPU-hours:"
"$SATURATE" sweep export --csv "$WORK/s.yaml" -o "$WORK/results.csv"
[ "$(wc -l <"$WORK/results.csv")" = 9 ] || fail "CSV rows"
# The report's timeline: every attempt a bar on its node's lane (jobs per node, from the attempts' started.json).
"$SATURATE" sweep report "$WORK/s.yaml" >/dev/null
page="$WORK/s.report.html"
[ "$(grep -o '<rect class="bar attempt' "$page" | wc -l)" = "$(journal_query "$journal" "SELECT count(*) FROM attempts")" ] ||
  fail "the report should draw one bar per attempt"
grep -q 'class="lane"[^>]*>node [^<]*</text>' "$page" || fail "the report's lanes should be Slurm nodes"
# job.json carries the run's environment (${envvar:...} secrets among it) on a shared filesystem: the owner's alone.
[ "$(find "$WORK/s.logs" -name job.json -exec stat -c %a {} + | sort -u)" = 600 ] || fail "job.json is not 0600"

# kill -9 of saturate midway: its jobs go on in Slurm; --resume adopts them and ends with every run done once.
spec "$WORK/k.yaml" "$WORK/k-done.log" ""
"$SATURATE" sweep "$WORK/k.yaml" --warmup 0.3s --window 0.3s >"$WORK/k1.out" 2>"$WORK/k1.err" &
sat=$!
kjournal="$WORK/k.journal"
wait_until '[ -f "$kjournal" ] && [ "$(journal_query "$kjournal" "SELECT count(*) FROM runs WHERE state = '"'running'"'")" -ge 2 ]' 60
kill -9 $sat
wait $sat 2>/dev/null || true
cat "$WORK/k1.err"
left=$(journal_query "$kjournal" "SELECT count(*) FROM runs WHERE state = 'running'")
[ "$left" -ge 1 ] || fail "expected runs in flight at the kill"
# Its runs are Slurm jobs: a local resume would run them twice, so it is refused.
sed 's/  backend: slurm/  backend: local/' "$WORK/k.yaml" >"$WORK/k-local.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/k-local.yaml" --journal "$kjournal" --resume
expect_contains "$ERR" "has runs in flight as Slurm jobs"
slurm_sweep k2 "$WORK/k.yaml" --resume
expect_contains "$(cat "$WORK/k2.err")" "resuming:"
expect_contains "$(cat "$WORK/k2.out")" "8 done, 0 failed"
[ "$(sort -n "$WORK/k-done.log" | paste -sd,)" = "1,2,3,4,5,6,7,8" ] || fail "k-done.log: $(cat "$WORK/k-done.log")"
finished=$(journal_query "$kjournal" "SELECT run_key, count(*) FROM attempts WHERE exit_class = 'finished' GROUP BY run_key")
[ "$(echo "$finished" | wc -l)" = 8 ] || fail "finished attempts: $finished"
[ -z "$(echo "$finished" | grep -v '|1$' || true)" ] || fail "a run finished twice: $finished"
[ "$(status_value "$kjournal" 'j["consistent"]')" = True ] || fail "journal inconsistent after resume"
[ -z "$(squeue -h -o %i)" ] || fail "jobs left in Slurm: $(squeue -h)"
# Ctrl-C with --cancel: the jobs in flight are cancelled, their runs stay queued, and --resume finishes them.
spec "$WORK/c.yaml" "$WORK/c-done.log" ""
"$SATURATE" sweep "$WORK/c.yaml" --cancel --warmup 0.3s --window 0.3s >"$WORK/c1.out" 2>"$WORK/c1.err" &
sat=$!
cjournal="$WORK/c.journal"
wait_until '[ -f "$cjournal" ] && [ "$(journal_query "$cjournal" "SELECT count(*) FROM runs WHERE state = '"'running'"'")" -ge 2 ]' 60
kill -INT $sat
wait_status $sat
rc=$RC
cat "$WORK/c1.err"
[ "$rc" = 130 ] || fail "an interrupted Slurm sweep should exit 130, got $rc"
expect_contains "$(cat "$WORK/c1.err")" "cancelling"
[ "$(journal_query "$cjournal" "SELECT count(*) FROM runs WHERE state = 'running'")" = 0 ] || fail "runs left running after --cancel"
[ -z "$(squeue -h -o '%i %j')" ] || fail "jobs left in Slurm after --cancel: $(squeue -h)"
slurm_sweep c2 "$WORK/c.yaml" --resume
expect_contains "$(cat "$WORK/c2.out")" "8 done, 0 failed"
[ "$(sort -n "$WORK/c-done.log" | paste -sd,)" = "1,2,3,4,5,6,7,8" ] || fail "c-done.log: $(cat "$WORK/c-done.log")"

# From here on the cases share nothing but the one-node cluster and check nothing of it as a whole (the cases above
# check that no job is left in squeue), and their runs sleep: the journal-lock case (13 s of a held lock) and the
# invisible-folder case (SlurmBackend's 10-s grace for an ended job's outcome) run in the background beside the
# others, each with its own journal and files, and are checked at the end. One after another these cases took 49 s
# of this test's ~80 (docs/benchmarks.md, suite-time5).
# The journal's SQLite lock held past the busy timeout (10 s) while jobs run: the sweep submits nothing new, names
# the jobs that go on in Slurm and exits 1; --resume adopts them and ends with every run done once.
journal_lock_case() {
  spec "$WORK/b.yaml" "$WORK/b-done.log" ""
  "$SATURATE" sweep "$WORK/b.yaml" --warmup 0.3s --window 0.3s >"$WORK/b1.out" 2>"$WORK/b1.err" &
  local sat=$!
  bjournal="$WORK/b.journal"
  wait_until '[ -f "$bjournal" ] && [ "$(journal_query "$bjournal" "SELECT count(*) FROM runs WHERE state = '"'running'"'")" -ge 2 ]' 60
  hold_journal_lock "$bjournal" 13
  wait_status $sat
  local rc=$RC
  cat "$WORK/b1.err"
  [ "$rc" = 1 ] || fail "a Slurm sweep whose journal stayed locked exits 1, got $rc"
  expect_contains "$(cat "$WORK/b1.err")" "submitting nothing new"
  expect_contains "$(cat "$WORK/b1.err")" "on in Slurm ("
  slurm_sweep b2 "$WORK/b.yaml" --resume
  expect_contains "$(cat "$WORK/b2.out")" "8 done, 0 failed"
  [ "$(sort -n "$WORK/b-done.log" | paste -sd,)" = "1,2,3,4,5,6,7,8" ] || fail "b-done.log: $(cat "$WORK/b-done.log")"
}
journal_lock_case >"$WORK/b.case.log" 2>&1 &
b_case=$!
pids+=("$b_case")

# A sweep folder the nodes cannot see (as a node-local /tmp on a real cluster): saturate runs in a private mount
# namespace with a tmpfs over the folder, which slurmd and its jobs do not share.
invisible_folder_case() {
  mkdir "$WORK/private"
  printf 'program: %s\nmethod: grid\nparameters:\n  i: {values: [1]}\nsaturate: {backend: slurm, slurm: {poll: 300ms}}\n' \
    "$WORK/slurm_train.py" >"$WORK/v.yaml"
  set +e
  unshare -m --propagation private bash -c 'mount -t tmpfs none "$1" && exec "$2" sweep "$3" --journal "$1/v.journal"' \
    _ "$WORK/private" "$SATURATE" "$WORK/v.yaml" >"$WORK/v.out" 2>"$WORK/v.err"
  local rc=$?
  set -e
  cat "$WORK/v.err"
  [ "$rc" = 1 ] || fail "a sweep folder the nodes cannot see should fail the sweep, got exit $rc"
  expect_contains "$(cat "$WORK/v.err")" "without reaching the sweep folder: the compute nodes cannot see it"
}
v_case=""
if unshare -m --propagation private true 2>/dev/null; then
  invisible_folder_case >"$WORK/v.case.log" 2>&1 &
  v_case=$!
  pids+=("$v_case")
else
  echo "note: no private mount namespace here (unshare -m); the invisible-folder case is left to the unit tests"
fi

# Errors a user can act on: a partition the cluster lacks, and sbatch's own rejection (the runs stay queued).
sed -i 's/    cpus: 2/    partition: gpus\n    cpus: 2/' "$WORK/k.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/k.yaml" --journal "$WORK/p.journal"
expect_contains "$ERR" "the Slurm cluster has no partition 'gpus'; partitions: debug"
sed -i 's/    partition: gpus/    options: [--constraint=nosuchfeature]/' "$WORK/k.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/k.yaml" --journal "$WORK/r.journal"
expect_contains "$ERR" "sbatch refused the job: sbatch: error: Batch job submission failed: Invalid feature specification"
[ "$(journal_query "$WORK/r.journal" "SELECT count(*) FROM runs WHERE state = 'queued'")" = 8 ] || fail "runs not left queued"
# An sbatch whose reply timed out after slurmctld had queued the job: saturate finds the job by its comment and
# watches it, instead of ending the sweep (and submitting the runs again on --resume: two jobs for one run).
mkdir -p "$WORK/slow-sbatch"
cat >"$WORK/slow-sbatch/sbatch" <<SH
#!/bin/sh
"$(command -v sbatch)" "\$@" >/dev/null
echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2
exit 1
SH
chmod +x "$WORK/slow-sbatch/sbatch"
spec "$WORK/t.yaml" "$WORK/t-done.log" ""
PATH="$WORK/slow-sbatch:$PATH" "$SATURATE" sweep "$WORK/t.yaml" --warmup 0.3s --window 0.3s >"$WORK/t.out" 2>"$WORK/t.err" \
  || fail "a timed-out sbatch that queued its job: $(cat "$WORK/t.err")"
expect_contains "$(cat "$WORK/t.out")" "8 done, 0 failed"
expect_contains "$(cat "$WORK/t.err")" "but Slurm queued the job"
[ "$(sort -n "$WORK/t-done.log" | paste -sd,)" = "1,2,3,4,5,6,7,8" ] || fail "t-done.log: $(cat "$WORK/t-done.log")"

# The same, but the job shows in squeue only after saturate gave up on sbatch: the attempt stays open, and --resume
# finds the job by its comment instead of submitting the run again (two jobs for one run).
# (The late submission leaves the process tree and the cgroup saturate gave sbatch, as a job slurmctld queued is no
# process of saturate's, so saturate does not stop it with sbatch: the wrapper waits until it is on its own, and it
# marks when its sbatch has returned, for the test to wait on instead of a fixed sleep that a loaded machine outlasts.)
cat >"$WORK/slow-sbatch/late" <<'SH'
#!/bin/sh
# $1: the done-marker folder; the rest: the real sbatch and its arguments.
dir=$1
shift
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
mnt=$(awk '{for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break }}' /proc/self/mountinfo | head -n 1)
if [ -n "$mnt" ] && [ -n "$cg" ]; then echo $$ >"$mnt${cg%/*}/cgroup.procs" 2>/dev/null || true; fi
touch "$dir/late.detached"
sleep 2
"$@"
touch "$dir/late.submitted"
SH
cat >"$WORK/slow-sbatch/sbatch" <<SH
#!/bin/sh
rm -f "$WORK/late.detached" "$WORK/late.submitted"
env -u SATURATE_RUN_TREE setsid -f "$WORK/slow-sbatch/late" "$WORK" "$(command -v sbatch)" "\$@" >/dev/null 2>&1
until [ -f "$WORK/late.detached" ]; do sleep 0.05; done
echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2
exit 1
SH
chmod +x "$WORK/slow-sbatch/late"
spec "$WORK/u.yaml" "$WORK/u-done.log" ""
set +e
PATH="$WORK/slow-sbatch:$PATH" "$SATURATE" sweep "$WORK/u.yaml" --warmup 0.3s --window 0.3s >"$WORK/u1.out" 2>"$WORK/u1.err"
rc=$?
set -e
cat "$WORK/u1.err"
[ "$rc" -ne 0 ] || fail "a sweep whose sbatch timed out should stop"
expect_contains "$(cat "$WORK/u1.err")" "Slurm may still have queued the job"
wait_until '[ -f "$WORK/late.submitted" ]' 60
"$SATURATE" sweep "$WORK/u.yaml" --resume --warmup 0.3s --window 0.3s >"$WORK/u2.out" 2>"$WORK/u2.err" \
  || fail "resume after a timed-out sbatch: $(cat "$WORK/u2.err")"
expect_contains "$(cat "$WORK/u2.out")" "8 done, 0 failed"
[ "$(sort -n "$WORK/u-done.log" | paste -sd,)" = "1,2,3,4,5,6,7,8" ] || fail "u-done.log: $(cat "$WORK/u-done.log")"
expect_contains "$(cat "$WORK/u2.err")" "resuming: 1 attempt left in flight"
[ "$(journal_query "$WORK/u.journal" "SELECT max(attempts) FROM runs")" = 1 ] || fail "a run was submitted twice: $(journal_query "$WORK/u.journal" "SELECT run_key, attempt_no, exit_class, slurm_job, detail FROM attempts") $(cat "$WORK/u2.err")"

# Staging on the nodes: each job copies the data into the node's store (one copy, shared by the sweep's jobs there)
# and its run reads the copy; a store folder that cannot be one fails each run at its first attempt (it would on every
# node), and the run never starts on the source. (A node short of room retries: NodeWrapper's unit test.)
mkdir -p "$WORK/ds"
echo "one sample" >"$WORK/ds/sample.txt"
cat >"$WORK/stage_train.py" <<'PY'
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("--data", required=True)
p.add_argument("--i", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
with open(os.path.join(a.data, "sample.txt")) as f, open(f"{a.out}.{a.i}", "w") as out:
    out.write(f"{a.data} {os.environ.get('SATURATE_STAGED_0')} {f.read().strip()}\n")
PY
stage_spec() {  # $1: the spec file, $2: the store folder, $3: retries
  cat >"$1" <<YAML
program: $WORK/stage_train.py
method: grid
command: ["$PY", "\${program}", "--data", "$WORK/ds", "\${args}", "--out", "$1.out"]
parameters:
  i: {values: [1, 2]}
saturate:
  backend: slurm
  retries: $3
  stage: [{path: $WORK/ds}]
  stage_policy: always
  stage_dir: $2
  slurm: {poll: 300ms}
YAML
}
stage_spec "$WORK/st.yaml" "$WORK/nodestore" 2
"$SATURATE" sweep "$WORK/st.yaml" >"$WORK/st.out" 2>"$WORK/st.err" || fail "staged Slurm sweep: $(cat "$WORK/st.err")"
expect_contains "$(cat "$WORK/st.out")" "2 done, 0 failed"
for i in 1 2; do
  read -r data env text <"$WORK/st.yaml.out.$i"
  case "$data" in "$WORK/nodestore/ds-"*) ;; *) fail "run $i read $data, not the node's copy";; esac
  [ "$env" = "$data" ] || fail "run $i: SATURATE_STAGED_0=$env, --data $data"
  [ "$text" = "one sample" ] || fail "run $i read '$text' from the copy"
done
[ "$(ls -d "$WORK"/nodestore/*.data | wc -l)" = 1 ] || fail "one copy per node: $(ls "$WORK/nodestore")"
echo "x" >"$WORK/not-a-folder"
stage_spec "$WORK/sf.yaml" "$WORK/not-a-folder" 1
set +e
"$SATURATE" sweep "$WORK/sf.yaml" >"$WORK/sf.out" 2>"$WORK/sf.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "a sweep whose nodes cannot stage should fail, got exit $rc: $(cat "$WORK/sf.err")"
[ ! -e "$WORK/sf.yaml.out.1" ] || fail "a run started without its staged data"
[ "$(journal_query "$WORK/sf.journal" "SELECT count(*) FROM attempts WHERE detail LIKE '%staging failed on node%'")" = 2 ] ||
  fail "each run should have failed once, saying staging failed: $(journal_query "$WORK/sf.journal" "SELECT run_key, attempt_no, exit_class, detail FROM attempts")"

# The two cases in the background.
wait "$b_case" || { cat "$WORK/b.case.log"; fail "the journal-lock case failed"; }
cat "$WORK/b.case.log"
if [ -n "$v_case" ]; then
  wait "$v_case" || { cat "$WORK/v.case.log"; fail "the invisible-folder case failed"; }
  cat "$WORK/v.case.log"
fi
echo "PASS in $((SECONDS - start)) s"
