#!/usr/bin/env bash
# Fault injection on the journal: one controller per journal (a journal locked by another process, two
# `sweep --resume` started together), and a journal that cannot be written (its SQLite lock held past the busy
# timeout; a full disk under it, a small tmpfs, where mount works): the sweep starts nothing new, stops its runs,
# exits with the error, and --resume then finishes every run once.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

sweep_of() {  # $1: journal
  echo "$SATURATE" sweep --journal "$1" --warmup 0.3s --window 0.3s --grid i=1,2,3,4
}
command=(-- "$PY" "$WORK/train.py" --i '{i}')

# A journal locked by another process (one that flocks its lock file): refused at once, naming the lock file.
journal="$WORK/locked.journal"
"$PY" -c 'import fcntl, sys, time; f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' \
  "$journal.lock" &
holder=$!
wait_until '[ -e "$journal.lock" ]' 10
sleep 0.2
SWEEP_SECONDS=0.5 expect_exit 2 $(sweep_of "$journal") "${command[@]}"
expect_contains "$ERR" "is in use by another saturate"
expect_contains "$ERR" "$journal.lock"
kill $holder
wait $holder 2>/dev/null || true
SWEEP_SECONDS=0.5 $(sweep_of "$journal") "${command[@]}" >"$WORK/locked.out" 2>&1 || fail "after the lock: $(cat "$WORK/locked.out")"

# Two `sweep --resume` started together on a journal with runs in flight: one runs it, the other is refused,
# naming the first; every run is done exactly once.
journal="$WORK/twice.journal"
SWEEP_SECONDS=30 $(sweep_of "$journal") "${command[@]}" >/dev/null 2>&1 &
sat=$!
wait_running "$journal" 1 60
kill -9 $sat
wait $sat 2>/dev/null || true
SWEEP_SECONDS=1 $(sweep_of "$journal") --resume "${command[@]}" >"$WORK/a.out" 2>"$WORK/a.err" &
a=$!
SWEEP_SECONDS=1 $(sweep_of "$journal") --resume "${command[@]}" >"$WORK/b.out" 2>"$WORK/b.err" &
b=$!
wait_status $a
rc_a=$RC
wait_status $b
rc_b=$RC
cat "$WORK/a.err" "$WORK/b.err"
[ "$(printf '%s\n' "$rc_a" "$rc_b" | sort | tr '\n' ' ')" = "0 2 " ] || fail "expected one success and one refusal, got $rc_a and $rc_b"
expect_contains "$(cat "$WORK/a.err" "$WORK/b.err")" "is in use by"
expect_each_finished_once "$journal" 4
expect_no_trainer_left

# The journal's SQLite lock held past the busy timeout (10 s) by another process: the write that waited fails, the
# sweep starts nothing new and stops with its state saved; --resume then finishes every run once.
journal="$WORK/busy.journal"
SWEEP_SECONDS=2 $(sweep_of "$journal") "${command[@]}" >"$WORK/busy.out" 2>"$WORK/busy.err" &
sat=$!
wait_running "$journal" 1 60
hold_journal_lock "$journal" 13
wait_status $sat
cat "$WORK/busy.err"
[ "$RC" -eq 1 ] || fail "a sweep whose journal stayed locked exits 1, got $RC"
expect_contains "$(cat "$WORK/busy.err")" "starting nothing new"
expect_no_trainer_left
SWEEP_SECONDS=0.5 $(sweep_of "$journal") --resume "${command[@]}" >"$WORK/busy2.out" 2>"$WORK/busy2.err" \
  || fail "resume after the lock: $(cat "$WORK/busy2.err")"
expect_contains "$(cat "$WORK/busy2.out")" "4 done, 0 failed"
expect_each_finished_once "$journal" 4

# A full disk under the journal.
mnt="$WORK/small"
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=4m tmpfs "$mnt" 2>/dev/null; then
  echo "SKIP (full disk part): cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)"
  echo PASS
  exit 0
fi
trap 'umount "$mnt" 2>/dev/null || true; rm -rf "$WORK"' EXIT
journal="$mnt/full.journal"
SWEEP_SECONDS=4 $(sweep_of "$journal") "${command[@]}" >"$WORK/full.out" 2>"$WORK/full.err" &
sat=$!
wait_running "$journal" 1 60
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true
wait_status $sat
cat "$WORK/full.err"
[ "$RC" -eq 1 ] || fail "a sweep whose journal cannot be written exits 1, got $RC"
expect_contains "$(cat "$WORK/full.err")" "starting nothing new"
expect_no_trainer_left
rm -f "$mnt/filler"
SWEEP_SECONDS=0.5 $(sweep_of "$journal") --resume "${command[@]}" >"$WORK/full2.out" 2>"$WORK/full2.err" \
  || fail "resume after the disk was freed: $(cat "$WORK/full2.err")"
expect_contains "$(cat "$WORK/full2.out")" "4 done, 0 failed"
expect_each_finished_once "$journal" 4
echo PASS
