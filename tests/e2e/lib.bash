# Shared helpers for end-to-end tests; sourced, not run. CTest sets SATURATE (the binary),
# SATURATE_SOURCE_DIR and FAKE_NVML (the NVML stand-in library).
: "${SATURATE:?run through ctest}"
: "${SATURATE_SOURCE_DIR:?run through ctest}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/saturate-e2e.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3

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
