# Shared helpers for end-to-end tests; sourced, not run. CTest sets SATURATE (the binary),
# SATURATE_SOURCE_DIR and FAKE_NVML (the NVML stand-in library).
: "${SATURATE:?run through ctest}"
: "${SATURATE_SOURCE_DIR:?run through ctest}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturate-e2e.XXXXXX")
PY=/usr/bin/python3
# Each test keeps saturate's per-user files (tune's cache, sweep's packing record, staged data) to itself, so that
# no test starts from what another one, or an earlier run, left behind. The example trainer's dataset stays in ~.
export XDG_CACHE_HOME="$WORK/xdg-cache"
# Background processes a test starts (pids+=($!)): interrupted and waited for when it ends, before $WORK goes.
pids=()
stop_started() {
  local pid
  for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap 'stop_started; rm -rf "$WORK"' EXIT
# A TCP port free on 127.0.0.1 just now.
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_contains() { [[ "$1" == *"$2"* ]] || fail "expected '$2' in: $1"; }
expect_not_contains() { [[ "$1" != *"$2"* ]] || fail "did not expect '$2' in: $1"; }
# Runs a command that must fail with exit code $1; stores stderr in $ERR.
expect_exit() {
  local want=$1; shift
  set +e
  ERR=$("$@" 2>&1 >/dev/null)
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || fail "expected exit $want, got $got from: $* (stderr: $ERR)"
}
