#!/usr/bin/env bash
# kill -9 of `saturate probe` (or tune) leaves its run's grandchildren running: PDEATHSIG takes the trainer down
# with saturate, not what the trainer started (DataLoader workers, launcher ranks; here a `sleep` it spawned). The
# next probe or tune stops them before it measures, and says so; a probe that is still alive keeps its own.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cd "$WORK"

cat >"$WORK/spawner.py" <<'PY'
import subprocess, sys, time
# A grandchild of saturate that outlives the trainer unless someone stops it; it carries the run's environment.
child = subprocess.Popen(["sleep", "300"])
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))
time.sleep(300)
PY

"$SATURATE" probe --budget 60s -- "$PY" "$WORK/spawner.py" "$WORK/grandchild.pid" >"$WORK/p1.out" 2>&1 &
sat=$!
for _ in $(seq 200); do [ -s "$WORK/grandchild.pid" ] && break; sleep 0.1; done
[ -s "$WORK/grandchild.pid" ] || fail "the trainer never started: $(cat "$WORK/p1.out")"
grandchild=$(cat "$WORK/grandchild.pid")
kill -9 "$sat"
wait "$sat" 2>/dev/null || true
sleep 0.5
kill -0 "$grandchild" 2>/dev/null || fail "the grandchild should have outlived the killed probe (else nothing to test)"

# The next probe: the leftovers are stopped and named before anything is measured.
set +e
"$SATURATE" probe --budget 20s -- /bin/true >"$WORK/p2.out" 2>"$WORK/p2.err"
set -e
cat "$WORK/p2.err"
expect_contains "$(cat "$WORK/p2.err")" "left running by a probe or tune that was killed (saturate pid $sat)"
for _ in $(seq 50); do kill -0 "$grandchild" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$grandchild" 2>/dev/null; then
  kill -9 "$grandchild"
  fail "the killed probe's grandchild is still running"
fi
echo PASS
