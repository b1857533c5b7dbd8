#!/usr/bin/env bash
# Data staging: a dataset of small files behind a slow mount (lib/slowfs.py, 20 ms per read) is copied once into the
# local store, and every run's argv that names it reads the copy instead.
#  (a) --stage-policy always: three runs of a loader-bound trainer all read one copy (its files equal the source's)
#      and read it at local speed; the journal has the three runs done.
#  (b) a second sweep (another journal, the same store) reuses that copy; a run gets it through `--data PATH`,
#      `--flag=PATH/file`, `${stage:0}` and SATURATE_STAGED_0.
#  (c) a path that does not exist is a usage error (exit 2) that names it.
#  (d) --stage-policy never: the runs keep the original path, and nothing is copied.
#  (e) auto (the default) with a copy already in the store uses it.
#  (f) auto with an empty store, told not to make even a short copy first (--stage-copy-first 0): the first run starts
#      on the mount, its loader is judged to wait on storage, the data is copied, and the next run reads the copy.
#  (j) auto with an empty store and the default --stage-copy-first: the cold reads show the copy short (300 files of
#      4 KiB), so it is made before the first run starts, and every run reads it; no attempt is stopped.
#  (h) auto on the slow mount with direct I/O (slowfs --direct-io: the reader waits in state S, never D), again with
#      --stage-copy-first 0: the cold reads
#      of a sample of the files show the mount ~100x slower than the store's drive, so the copy begins at once; the
#      first run's first seconds (its CPU against its data wait) confirm it; the first run, far from its end, is
#      restarted on the copy; every run is done exactly once, and the summary says the first run was restarted.
#  (i) the same with saturate killed -9 right as it restarts the first run: --resume finishes every run once, on the
#      copy the store now holds, and the journal stays whole.
#  (g) the same data behind sshfs (a real network filesystem, over a private sshd on loopback) stages too. Where
#      sshd or sshfs cannot run here, the test stops there with a skip (77), the others having passed.
#
# What this test relies on of the implementation (docs/internals/sweep.md, "Data staged on a local drive"):
#  - run logs at <journal without .journal>.logs/<index>-<key>/attempt-1/stdout.log (as sweep_oom.sh reads them);
#  - the copy of $WORK/mnt lies under --stage-dir ("$WORK/store/mnt-<hash>.data/mnt", datastore/store.h), and the store
#    holds exactly one file named f000000.bin once copied;
#  - JSON (`sweep --json` and `sweep status --json`): staging.decision "staged" (always) / "source" (never),
#    staging.sources[0].local (the copy; null with never) and staging.sources[0].reused (false when this sweep copied,
#    true when the copy was in the store); a reused copy's files keep their inode;
#  - (c) exit 2, and stderr names the path as given ("saturate: error: stage path $WORK/does-not-exist does not
#    exist");
#  - (d) with never, SATURATE_STAGED_0 holds the source's own path (sweep/staging.h: "A source left in place gives
#    its own path to the same names");
#  - (f) staging.decision "staged" once auto judged the first run (read_files.py at 20 ms a sample) to wait on storage;
#  - (h) staging.on_source [{index, key, restarted, why}] (the runs on the source when the copy was made), and the
#    journal's attempts: the first run's first attempt ended "stopped" with a detail starting "restarted on the local
#    copy", each run one "finished" attempt;
#  - `${stage:0}` works in the short form's command (after `--`), not only in a spec's `command:`.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
source "$(dirname "$0")/lib/mounts.bash"
cd "$WORK"
READ="$SATURATE_SOURCE_DIR/tests/e2e/scripts/read_files.py"

"$PY" "$READ" --data "$WORK/src" --make 300 --file-kib 4 >/dev/null
slowfs_mount "$WORK/src" "$WORK/mnt" 20

# A run that only shows what it was given (no torch: it starts at once).
cat >"$WORK/show.py" <<'PY'
import os, sys
for a in sys.argv[1:]:
    print("arg:", a)
print("env:", os.environ.get("SATURATE_STAGED_0", "unset"), flush=True)
PY

# The stdout logs of the journal $1's runs, one path per line.
run_logs() { ls "${1%.journal}".logs/*/attempt-1/stdout.log; }
# Prints a Python expression over the JSON file $1 (as j).
json_value() { "$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# (a) always: one copy, three runs on it.
t0=$SECONDS
"$SATURATE" sweep --cpu -q --journal "$WORK/a.journal" --stage "$WORK/mnt" --stage-policy always \
  --stage-dir "$WORK/store" --grid i=1,2,3 -- "$PY" "$READ" --data "$WORK/mnt" --samples 300 --seed '{i}' \
  >"$WORK/a.out" 2>&1 || fail "sweep (a) failed: $(cat "$WORK/a.out")"
echo "(a) took $((SECONDS - t0)) s"
[ "$(journal_query "$WORK/a.journal" "SELECT count(*) FROM runs WHERE state = 'done'")" = 3 ] ||
  fail "(a) runs done: $(journal_query "$WORK/a.journal" "SELECT idx, state FROM runs")"
logs=$(run_logs "$WORK/a.journal")
[ "$(echo "$logs" | grep -c .)" = 3 ] || fail "(a) expected 3 run logs, found: $logs"
copies=()
for log in $logs; do
  data=$(sed -n 's/^data: //p' "$log")
  [[ "$data" == "$WORK/store/"* ]] || fail "(a) a run read '$data', not a copy under $WORK/store: $(cat "$log")"
  copies+=("$data")
  # 300 reads of 20 ms on the mount take 6 s at least; on the copy they take well under a second.
  secs=$(sed -n 's/^read 300 samples in \([0-9.]*\) s$/\1/p' "$log")
  [ -n "$secs" ] || fail "(a) the run did not finish its 300 samples: $(cat "$log")"
  "$PY" -c "import sys; sys.exit(0 if $secs < 3 else 1)" || fail "(a) 300 samples took $secs s: not the local copy"
done
[ "$(printf '%s\n' "${copies[@]}" | sort -u | wc -l)" = 1 ] || fail "(a) the runs read different copies: ${copies[*]}"
copy=${copies[0]}
[ "$(find "$WORK/store" -name f000000.bin | wc -l)" = 1 ] ||
  fail "(a) expected one copy in the store, found: $(find "$WORK/store" -name f000000.bin)"
diff -r "$WORK/src" "$copy" >/dev/null ||
  fail "(a) the copy $copy differs from the source: $(diff -rq "$WORK/src" "$copy")"
n=$(find "$copy" -type f | wc -l)
[ "$n" = 300 ] || fail "(a) the copy holds $n files, not 300"
inode=$(stat -c %i "$copy/f000000.bin")
"$SATURATE" sweep status --json --journal "$WORK/a.journal" >"$WORK/a.json"
staged='[j["staging"]["decision"], j["staging"]["sources"][0]["local"], j["staging"]["sources"][0]["reused"]]'
[ "$(json_value "$WORK/a.json" "$staged")" = "['staged', '$copy', False]" ] ||
  fail "(a) status (the runs read $copy): $(json_value "$WORK/a.json" 'j.get("staging")')"

# (b) another sweep, the same store: the copy is reused, and every way of naming the source leads to it.
"$SATURATE" sweep --cpu --json --journal "$WORK/b.journal" --stage "$WORK/mnt" --stage-policy always \
  --stage-dir "$WORK/store" --grid i=1,2 -- "$PY" "$WORK/show.py" --data "$WORK/mnt" \
  "--file=$WORK/mnt/f000001.bin" '${stage:0}' --i '{i}' >"$WORK/b.json" 2>"$WORK/b.err" ||
  fail "sweep (b) failed: $(cat "$WORK/b.err")"
[ "$(json_value "$WORK/b.json" 'j["staging"]["sources"][0]["reused"]')" = True ] ||
  fail "(b) the second sweep did not reuse the copy: $(json_value "$WORK/b.json" 'j.get("staging")')"
[ "$(json_value "$WORK/b.json" 'j["staging"]["sources"][0]["local"]')" = "$copy" ] || fail "(b) another copy"
[ "$(stat -c %i "$copy/f000000.bin")" = "$inode" ] || fail "(b) the copy was made again"
[ "$(find "$WORK/store" -name f000000.bin | wc -l)" = 1 ] || fail "(b) a second copy appeared in the store"
for log in $(run_logs "$WORK/b.journal"); do
  out=$(cat "$log")
  expect_contains "$out" "arg: --data"$'\n'"arg: $copy"$'\n'
  expect_contains "$out" "arg: --file=$copy/f000001.bin"
  expect_contains "$out" $'\n'"arg: $copy"$'\n'"arg: --i"
  expect_contains "$out" "env: $copy"
done
[ "$(journal_query "$WORK/b.journal" "SELECT count(*) FROM runs WHERE state = 'done'")" = 2 ] ||
  fail "(b) runs done: $(journal_query "$WORK/b.journal" "SELECT idx, state FROM runs")"

# (c) a source that does not exist.
expect_exit 2 "$SATURATE" sweep --cpu -q --journal "$WORK/c.journal" --stage "$WORK/does-not-exist" \
  --stage-dir "$WORK/store" --grid i=1 -- "$PY" "$WORK/show.py" --i '{i}'
expect_contains "$ERR" "$WORK/does-not-exist"

# (d) never, on local disk: the runs read the source itself.
"$SATURATE" sweep --cpu -q --journal "$WORK/d.journal" --stage "$WORK/src" --stage-policy never \
  --stage-dir "$WORK/store-never" --grid i=1,2 -- "$PY" "$WORK/show.py" --data "$WORK/src" --i '{i}' \
  >"$WORK/d.out" 2>&1 || fail "sweep (d) failed: $(cat "$WORK/d.out")"
for log in $(run_logs "$WORK/d.journal"); do
  out=$(cat "$log")
  expect_contains "$out" "arg: --data"$'\n'"arg: $WORK/src"$'\n'
  expect_contains "$out" "env: $WORK/src"
done
[ -z "$(find "$WORK/store-never" -name f000000.bin 2>/dev/null)" ] || fail "(d) never: a copy was made anyway"
"$SATURATE" sweep status --json --journal "$WORK/d.journal" >"$WORK/d.json"
[ "$(json_value "$WORK/d.json" "$staged")" = "['source', None, False]" ] ||
  fail "(d) status: $(json_value "$WORK/d.json" 'j.get("staging")')"

# (e) auto with the copy already in the store: the run reads it without being judged first.
"$SATURATE" sweep --cpu -q --journal "$WORK/e.journal" --stage "$WORK/mnt" --stage-dir "$WORK/store" \
  --grid i=1 -- "$PY" "$WORK/show.py" --data "$WORK/mnt" --i '{i}' >"$WORK/e.out" 2>&1 ||
  fail "sweep (e) failed: $(cat "$WORK/e.out")"
expect_contains "$(cat "$(run_logs "$WORK/e.journal")")" "arg: --data"$'\n'"arg: $copy"$'\n'

# (f) auto, nothing in the store yet: judged on the first run.
"$SATURATE" sweep --cpu -q --journal "$WORK/f.journal" --stage "$WORK/mnt" --stage-dir "$WORK/store-auto" \
  --stage-copy-first 0 --grid i=1,2 -- "$PY" "$READ" --data "$WORK/mnt" --samples 400 --seed '{i}' >"$WORK/f.out" 2>&1 ||
  fail "sweep (f) failed: $(cat "$WORK/f.out")"
"$SATURATE" sweep status --json --journal "$WORK/f.journal" >"$WORK/f.json"
[ "$(json_value "$WORK/f.json" 'j["staging"]["decision"]')" = staged ] ||
  fail "(f) auto did not stage: $(json_value "$WORK/f.json" 'j.get("staging")')"
seen=$(run_logs "$WORK/f.journal" | xargs grep -h "^data: ")
on_copy=$(grep -c "^data: $WORK/store-auto/" <<<"$seen" || true)
on_mount=$(grep -c "^data: $WORK/mnt$" <<<"$seen" || true)
[ "$on_copy" -ge 1 ] && [ "$on_mount" -le 1 ] || fail "(f) $on_copy runs read the copy, $on_mount the mount: $seen"

# (j) auto, nothing in the store yet, a short copy: made before the first run.
"$SATURATE" sweep --cpu --json --journal "$WORK/j.journal" --stage "$WORK/mnt" --stage-dir "$WORK/store-j" \
  --grid i=1,2 -- "$PY" "$WORK/show.py" --data "$WORK/mnt" --i '{i}' >"$WORK/j.json" 2>"$WORK/j.err" ||
  fail "sweep (j) failed: $(cat "$WORK/j.err")"
[ "$(json_value "$WORK/j.json" '[j["staging"]["decision"], j["staging"]["on_source"]]')" = "['staged', []]" ] ||
  fail "(j) staging: $(json_value "$WORK/j.json" 'j["staging"]')"
expect_contains "$(json_value "$WORK/j.json" 'j["staging"]["reason"]')" "is made before the first run starts"
for log in $(run_logs "$WORK/j.journal"); do
  expect_contains "$(cat "$log")" "arg: --data"$'\n'"arg: $WORK/store-j/"
done
[ "$(journal_query "$WORK/j.journal" "SELECT count(*) FROM attempts WHERE exit_class != 'finished'")" = 0 ] ||
  fail "(j) attempts: $(journal_query "$WORK/j.journal" "SELECT run_key, attempt_no, exit_class, detail FROM attempts")"

# (h) auto on the direct-I/O mount: judged in seconds, copied at once, the first run restarted on the copy.
slowfs_mount "$WORK/src" "$WORK/mnt-direct" 20 0 --direct-io
t0=$SECONDS
"$SATURATE" sweep --cpu --json --journal "$WORK/h.journal" --stage "$WORK/mnt-direct" --stage-dir "$WORK/store-h" \
  --stage-copy-first 0 --grid i=1,2 -- "$PY" "$READ" --data "$WORK/mnt-direct" --samples 600 --seed '{i}' >"$WORK/h.json" 2>"$WORK/h.err" ||
  fail "sweep (h) failed: $(cat "$WORK/h.err")"
echo "(h) took $((SECONDS - t0)) s"
[ "$(json_value "$WORK/h.json" '[j["staging"]["decision"], [o["restarted"] for o in j["staging"]["on_source"]]]')" = \
  "['staged', [True]]" ] || fail "(h) staging: $(json_value "$WORK/h.json" 'j["staging"]')"
expect_contains "$(json_value "$WORK/h.json" 'j["staging"]["reason"]')" "its loader waits on storage"
expect_contains "$(cat "$WORK/h.err")" "restarting it on the copy"
# Each run done once: one finished attempt each; the first run's first attempt stopped to restart on the copy.
[ "$(journal_query "$WORK/h.journal" "SELECT count(*) FROM runs WHERE state = 'done'")" = 2 ] ||
  fail "(h) runs done: $(journal_query "$WORK/h.journal" "SELECT idx, state FROM runs")"
[ "$(journal_query "$WORK/h.journal" "SELECT group_concat(n) FROM (SELECT count(*) AS n FROM attempts WHERE exit_class = 'finished' GROUP BY run_key)")" = 1,1 ] ||
  fail "(h) finished attempts per run: $(journal_query "$WORK/h.journal" "SELECT run_key, attempt_no, exit_class, detail FROM attempts")"
journal_query "$WORK/h.journal" "SELECT detail FROM attempts WHERE exit_class = 'stopped'" | grep -q "^restarted on the local copy" ||
  fail "(h) no attempt stopped to restart: $(journal_query "$WORK/h.journal" "SELECT run_key, attempt_no, exit_class, detail FROM attempts")"
for log in "${WORK}"/h.logs/*/attempt-*/stdout.log; do
  if grep -q "^read 600 samples" "$log"; then
    grep -q "^data: $WORK/store-h/" "$log" || fail "(h) a run finished on the mount: $(cat "$log")"
  fi
done

# (i) the same, with saturate killed -9 as it restarts the first run; --resume.
sweep_i=("$SATURATE" sweep --cpu --journal "$WORK/i.journal" --stage "$WORK/mnt-direct" --stage-dir "$WORK/store-i"
  --stage-copy-first 0 --grid i=3,4)
command_i=(-- "$PY" "$READ" --data "$WORK/mnt-direct" --samples 600 --seed '{i}')
"${sweep_i[@]}" "${command_i[@]}" >"$WORK/i1.out" 2>"$WORK/i1.err" &
sat=$!
for _ in $(seq 600); do
  grep -q "restarting it on the copy" "$WORK/i1.err" && break
  kill -0 $sat 2>/dev/null || break
  sleep 0.1
done
grep -q "restarting it on the copy" "$WORK/i1.err" || fail "(i) no restart to kill: $(cat "$WORK/i1.err")"
kill -9 $sat
wait $sat 2>/dev/null || true
"$SATURATE" sweep status --journal "$WORK/i.journal" >/dev/null 2>"$WORK/i-status.err" || true
expect_not_contains "$(cat "$WORK/i-status.err")" "inconsistent"
"${sweep_i[@]}" --resume -q "${command_i[@]}" >"$WORK/i2.out" 2>&1 || fail "(i) the resume failed: $(cat "$WORK/i2.out")"
[ "$(journal_query "$WORK/i.journal" "SELECT count(*) FROM runs WHERE state = 'done'")" = 2 ] ||
  fail "(i) runs done: $(journal_query "$WORK/i.journal" "SELECT idx, state FROM runs")"
[ "$(journal_query "$WORK/i.journal" "SELECT group_concat(n) FROM (SELECT count(*) AS n FROM attempts WHERE exit_class = 'finished' GROUP BY run_key)")" = 1,1 ] ||
  fail "(i) finished attempts per run: $(journal_query "$WORK/i.journal" "SELECT run_key, attempt_no, exit_class, detail FROM attempts")"
"$SATURATE" sweep status --json --journal "$WORK/i.journal" >"$WORK/i.json"
[ "$(json_value "$WORK/i.json" 'j["staging"]["decision"]')" = staged ] ||
  fail "(i) the resume should read the copy: $(json_value "$WORK/i.json" 'j.get("staging")')"
echo "(h), (i) took $((SECONDS - t0)) s"

# (g) sshfs.
echo "(a) to (f), (h), (i), (j) passed"
sshfs_mount "$WORK/src" "$WORK/ssh"
"$SATURATE" sweep --cpu -q --journal "$WORK/g.journal" --stage "$WORK/ssh" --stage-policy always \
  --stage-dir "$WORK/store-ssh" --grid i=1 -- "$PY" "$WORK/show.py" --data "$WORK/ssh" --i '{i}' \
  >"$WORK/g.out" 2>&1 || fail "sweep (g) failed: $(cat "$WORK/g.out")"
ssh_copy=$(sed -n '2s/^arg: //p' "$(run_logs "$WORK/g.journal")")
[[ "$ssh_copy" == "$WORK/store-ssh/"* ]] || fail "(g) the run read '$ssh_copy', not a copy under $WORK/store-ssh"
diff -r "$WORK/src" "$ssh_copy" >/dev/null || fail "(g) the copy $ssh_copy differs from the source"
echo PASS
