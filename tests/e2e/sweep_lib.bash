# Shared by the sweep end-to-end tests; sourced after lib.bash.

# A training stand-in that reports through `import saturate` while it sleeps in 50 ms steps, prints its metric,
# and appends its number to done.log when it finishes. Options:
#   --i N            the run's number (its loss is 1/N)
#   --seconds S      how long it trains (default: $SWEEP_SECONDS, else 3)
#   --live-dir DIR   keep a marker file there while alive
#   --oom-above K    about one second in, fail with PyTorch's CUDA out-of-memory message if more than K runs are
#                    alive (markers in --live-dir), as a run would on an over-packed GPU
#   --hang 1         never finish (until stopped)
#   --step S         the step's sleep in seconds (default 0.05)
cat >"$WORK/train.py" <<'PY'
import argparse, glob, os, sys, time
import saturate

p = argparse.ArgumentParser()
p.add_argument("--i", type=int, required=True)
p.add_argument("--seconds", type=float, default=float(os.environ.get("SWEEP_SECONDS", "3")))
p.add_argument("--live-dir", default="")
p.add_argument("--oom-above", type=int, default=0)
p.add_argument("--hang", type=int, default=0)
p.add_argument("--step", type=float, default=0.05)
p.add_argument("--done-dir", default=os.path.dirname(os.path.abspath(__file__)))
a = p.parse_args()
marker = os.path.join(a.live_dir, f"live.{a.i}.{os.getpid()}") if a.live_dir else None
if marker:
    open(marker, "w").close()
try:
    while a.hang:
        time.sleep(0.1)
    for step in saturate.track(range(max(1, int(a.seconds / a.step)))):
        time.sleep(a.step)
        if a.oom_above and step == 20:
            alive = len(glob.glob(os.path.join(a.live_dir, "live.*")))
            if alive > a.oom_above:
                print(f"{alive} runs alive", flush=True)
                print("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", file=sys.stderr)
                sys.exit(1)
    print(f"epoch 1 loss={1.0 / a.i:.4f}", flush=True)
    with open(os.path.join(a.done_dir, "done.log"), "a") as f:
        f.write(f"{a.i}\n")
finally:
    if marker:
        os.remove(marker)
PY

# Prints the rows of an SQL query on a journal, one per line, columns joined by '|'.
journal_query() {
  "$PY" - "$1" "$2" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
for row in con.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}

# Prints a Python expression over `saturate sweep status --json` (as j) for the journal $1.
status_value() {
  "$SATURATE" sweep status --json --journal "$1" | "$PY" -c 'import json, sys; j = json.load(sys.stdin); print(eval(sys.argv[1]))' "$2"
}

# Waits up to $2 seconds for the shell condition $1 to hold.
wait_until() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    eval "$1" && return 0
    sleep 0.2
  done
  fail "timed out waiting for: $1"
}

# Fails when a process of this test's trainer is still alive.
expect_no_trainer_left() {
  local left
  left=$(pgrep -f "$WORK/train.py" || true)
  [ -z "$left" ] || fail "trainer processes left behind: $(ps -o pid,ppid,args -p ${left//$'\n'/,})"
}

# Waits up to $3 seconds until at least $2 runs of the journal $1 are running.
wait_running() {
  wait_until "[ -f '$1' ] && [ \"\$(journal_query '$1' \"SELECT count(*) FROM runs WHERE state = 'running'\")\" -ge $2 ]" "$3"
}

# Waits for the background job $1 and puts its exit status in RC (with set -e still on).
# Holds the SQLite journal $1's write lock for $2 seconds, as another process would (past its busy timeout).
hold_journal_lock() {
  "$PY" -c 'import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
time.sleep(float(sys.argv[2]))
con.execute("ROLLBACK")' "$1" "$2"
}

wait_status() {
  RC=0
  wait "$1" || RC=$?
}

# Fails unless every run of the journal $1 has exactly one finished attempt, $2 runs in all.
expect_each_finished_once() {
  local finished
  finished=$(journal_query "$1" "SELECT run_key, count(*) FROM attempts WHERE exit_class = 'finished' GROUP BY run_key")
  [ "$(echo "$finished" | grep -c .)" = "$2" ] || fail "finished attempts: $finished"
  [ -z "$(echo "$finished" | grep -v '|1$' || true)" ] || fail "a run finished twice: $finished"
}
