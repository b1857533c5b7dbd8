#!/usr/bin/env bash
# The CPU rehearsal of the GPU checks (bench/gpu_checks.sh --cpu, issue 40): each of the parts a lent GPU runs in one
# call (sweep, stacks, oom, tune) runs end to end here on CPU torch, with the NVML stand-in as the GPU (8 GiB whose
# memory the runs use, bench/gpu/fake_device.py), and leaves at most 8 files; bench/gpu_report.py then makes the
# tables of docs/benchmarks.md from them, and the tables hold the rows a GPU's would: every schedule of the sweep
# with all of its runs done once, each stack probed or skipped with the reason, the out-of-memory sweep's runs done
# once, each batch search's answer trained afresh, and tune's pasted line timed by its own lines. The stack scripts
# for packages this machine lacks (transformers, lightning, accelerate) are compiled at least. Nothing here is
# timed: what is asserted is which runs ended how.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
SRC=$SATURATE_SOURCE_DIR
export TMPDIR="$WORK"
# No MPS stand-in daemon outlives the test, whatever happens (saturate quits the one it started).
cleanup() {
  for p in $(cat "$WORK"/saturate-mps-*/pipe/daemon.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

PYTHONPYCACHEPREFIX="$WORK/pycache" "$PY" -m py_compile "$SRC"/bench/gpu/*.py "$SRC/bench/gpu_report.py"
for f in "$SRC/bench/gpu_checks.sh" "$SRC"/bench/gpu/part_*.sh; do bash -n "$f"; done

OUT="$WORK/out"
for part in sweep stacks oom tune; do
  t0=$SECONDS
  bash "$SRC/bench/gpu_checks.sh" --cpu "$SATURATE" "$OUT" "$part" >"$WORK/$part.console" 2>&1 ||
    { cat "$WORK/$part.console"; fail "part $part exited $?"; }
  echo "part $part: $((SECONDS - t0)) s"
  sed 's/^/  | /' "$OUT/$part.txt"
done
files=$(ls "$OUT")
[ "$(echo "$files" | wc -l)" -le 8 ] || fail "more than 8 files to bring back: $files"
for part in sweep stacks oom tune; do [ -s "$OUT/$part.tgz" ] || fail "no $part.tgz"; done

"$PY" "$SRC/bench/gpu_report.py" "$OUT" >"$WORK/report.md"
cat "$WORK/report.md"
report=$(cat "$WORK/report.md")
# Rows of the table whose first cell is $1.
row() { grep -E "^\| $1 \|" <<<"$report" || true; }

# The sweep (the --cpu sizes: 2 runs; k = 2): every schedule, every run done exactly once.
for schedule in sequential k2 saturate "saturate mps"; do
  r=$(row "$schedule")
  [ -n "$r" ] || fail "the sweep table has no row for $schedule"
  expect_contains "$r" "| 2/2 (yes) |"
done

# The stacks: torchrun probed, against its ranks' own count over the same window; the others probed where their
# package imports, else skipped with the reason.
r=$(row torchrun)
[[ "$r" =~ \|\ [0-9.]+\ \|\ [0-9.]+%\ \|\ [0-9.]+\ \|\ [0-9.]+\ \| ]] || fail "torchrun was not measured against its own count: $r"
for stack in hf_trainer:transformers lightning:lightning accelerate:accelerate; do
  name=${stack%%:*} module=${stack##*:}
  r=$(row "$name")
  [ -n "$r" ] || fail "the stacks table has no row for $name"
  if "$PY" -c "import $module" 2>/dev/null; then
    expect_not_contains "$r" "skipped"
  else
    expect_contains "$r" "$module does not import with"
  fi
done

# Out of memory (the --cpu sizes: 3 runs, the last one too big to share): every run of the sweep finished once,
# none failed; an attempt that ran out of memory was queued again, not failed (--retries 0).
for i in 1 2 3; do expect_contains "$report" "$i: done, "; done
expect_contains "$report" "0 failures, finished 1x"
expect_not_contains "$report" "finished 0x"
expect_not_contains "$report" "finished 2x"
if grep -q "^out-of-memory attempts: 0 " <<<"$report"; then
  echo "the out-of-memory sweep never packed its last run beside another run (a busy machine holds one run at a time)"
else
  echo "the out-of-memory sweep put its last run beside another run, and queued it again"
fi
# tune's batch search: never past a batch that ran out of memory; the largest batch that fitted and the one
# recommended both train afresh under the cap. On a busy machine (load 7 beside three builds, once) the 40-s tune spent
# its budget on the baseline and ceilings and tried no batch: then the report must say so (n/a), and only the
# recommendation is trained afresh.
line=$(grep "^saturate tune: largest fitting " <<<"$report") || fail "no boundary line for tune"
if grep -qE "^\| saturate tune \(largest fitting\) \| none \|" <<<"$report"; then
  echo "tune's batch search tried no batch within its budget (a busy machine): no boundary to check"
  expect_contains "$line" "largest fitting n/a, smallest out of memory none"
else
  read -r fits oom < <(sed 's/.*largest fitting \([0-9]*\), smallest out of memory \([0-9a-z]*\)/\1 \2/' <<<"$line")
  [[ "$fits" =~ ^[0-9]+$ ]] || fail "tune tried batches but names no largest fitting one: $line"
  [ "$oom" = none ] || [ "$fits" -lt "$oom" ] || fail "tune's largest fitting batch $fits is not below $oom, which ran out of memory"
  expect_contains "$(row 'saturate tune \(largest fitting\)')" "| yes |"
fi
expect_contains "$(row 'saturate tune \(recommended\)')" "| yes |"
for finder in lightning-power lightning-binsearch accelerate; do
  module=${finder%%-*}
  "$PY" -c "import $module" 2>/dev/null || expect_contains "$(row "$finder")" "$module does not import with"
done

# Tune: a recommendation, and the pasted line timed by its own lines outside saturate.
expect_contains "$report" "recommended command: "
expect_contains "$report" "pasted command, its own count over its last two thirds: "
echo PASS
