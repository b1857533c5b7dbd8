#!/usr/bin/env bash
# `--mps` after `kill -9` of saturate: the MPS control daemon it started stays (nothing runs after SIGKILL), and
# `sweep --resume --mps` finds it by its folder, quits it, starts its own and quits that one at the end. Runs see
# the daemon's pipe folder. GPUs are the NVML stand-in's; the control program is a stand-in on PATH that
# daemonises on -d and quits on "quit", as NVIDIA's nvidia-cuda-mps-control does (tests/fake_nvml/).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=1
# saturate's MPS folders go here, so the test sees only its own.
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR" "$WORK/bin"

cp "$SATURATE_SOURCE_DIR/tests/fake_nvml/nvidia-cuda-mps-control" "$WORK/bin/"
export PATH="$WORK/bin:$PATH"

daemons() { cat "$TMPDIR"/saturate-mps-*/pipe/daemon.pid 2>/dev/null || true; }
alive() { [ -n "$1" ] && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ] && kill -0 "$1" 2>/dev/null; }
# No stand-in daemon outlives the test, whatever happens.
cleanup() {
  for p in $(daemons) $(cat "$WORK"/daemon.* 2>/dev/null) ${first:-}; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/mps_run.py" <<'PY'
import os, sys, time
import saturate
# The pipe folder this run was given, and the pid of the daemon serving it.
pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "")
with open(os.path.join(pipe, "daemon.pid")) as f:
    daemon = f.read().strip()
with open(os.path.join(os.environ["OUT_DIR"], f"pipe.{sys.argv[1]}"), "w") as f:
    f.write(pipe)
with open(os.path.join(os.environ["OUT_DIR"], f"daemon.{sys.argv[1]}"), "w") as f:
    f.write(daemon)
for _ in saturate.track(range(int(float(os.environ["RUN_SECONDS"]) / 0.05))):
    time.sleep(0.05)
PY
export OUT_DIR="$WORK"
journal="$WORK/mps.journal"
sweep=("$SATURATE" sweep --mps --journal "$journal" --warmup 0.3s --window 0.3s --grid i=1,2)
command=(-- "$PY" "$WORK/mps_run.py" '{i}')

RUN_SECONDS=600 "${sweep[@]}" "${command[@]}" >"$WORK/first.out" 2>"$WORK/first.err" &
sat=$!
wait_until '[ -s "$WORK/pipe.1" ]' 60
first=$(daemons)
[ "$(echo "$first" | wc -w)" = 1 ] || fail "expected one MPS daemon, got: $first"
[ "$(cat "$WORK/pipe.1")" = "$(dirname "$(ls "$TMPDIR"/saturate-mps-*/pipe/daemon.pid)")" ] \
  || fail "the run should see the daemon's pipe folder, saw: $(cat "$WORK/pipe.1")"
first_dir=$(dirname "$(cat "$WORK/pipe.1")")
kill -9 $sat
wait $sat 2>/dev/null || true
sleep 0.3
alive "$first" || fail "kill -9 should leave the daemon running (it is what the fix has to find)"

rm -f "$WORK"/pipe.* "$WORK"/daemon.*
rc=0
RUN_SECONDS=0.5 "${sweep[@]}" --resume "${command[@]}" >"$WORK/resume.out" 2>"$WORK/resume.err" || rc=$?
cat "$WORK/resume.err" "$WORK/resume.out"
[ "$rc" = 0 ] || fail "the resumed sweep exited $rc"
expect_contains "$(cat "$WORK/resume.out")" "2 done, 0 failed"
for _ in $(seq 1 50); do alive "$first" || break; sleep 0.1; done
! alive "$first" || fail "the daemon the killed saturate started is still running"
expect_contains "$(cat "$WORK/resume.err")" "quit the MPS daemon that saturate (pid $sat) left running in $first_dir"
[ ! -e "$first_dir" ] || fail "its folder should be gone"
second_pipe=$(cat "$WORK/pipe.1")
[ -n "$second_pipe" ] && [ "$second_pipe" != "$first_dir/pipe" ] || fail "the resume should run a daemon of its own"
second=$(cat "$WORK/daemon.1")
for _ in $(seq 1 50); do alive "$second" || break; sleep 0.1; done
! alive "$second" || fail "the resumed sweep should quit its own daemon at the end"
! ls -d "$TMPDIR"/saturate-mps-* 2>/dev/null || fail "the resumed sweep should remove its MPS folder"
echo PASS
