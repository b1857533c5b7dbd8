#!/usr/bin/env bash
# A child's output is arbitrary bytes. A failing script whose last error line has a two-byte character across the
# 300-byte evidence cut, or bytes that are no UTF-8 at all, must end probe and tune with their ordinary failure
# report (exit 1, probe.json / results.json readable), never with an abort.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

cat >"$WORK/fail.py" <<'PY'
import sys
sys.stderr.buffer.write(b"Traceback (most recent call last):\n")
sys.stderr.buffer.write(b"latin-1 says: Gr\xfc\xdfe\n")
# Latin-1 bytes early in the last line, and "é" across bytes 299 and 300, where the evidence is cut.
sys.stderr.buffer.write(b"RuntimeError: Gr\xfc\xdfe " + b"x" * 279 + "é".encode() + b" und so weiter\n")
sys.exit(3)
PY

no_abort() {  # $1: rc, $2: stderr file
  expect_not_contains "$(cat "$2")" "terminate called"
  expect_not_contains "$(cat "$2")" "internal error"
  [ "$1" -eq 1 ] || fail "expected exit 1, got $1: $(cat "$2")"
}

set +e
"$SATURATE" probe --json --budget 20s --out "$WORK/probe" -- "$PY" "$WORK/fail.py" >"$WORK/probe.json" 2>"$WORK/probe.err"
rc=$?
set -e
no_abort "$rc" "$WORK/probe.err"
[ "$(jq_py "$WORK/probe.json" 'j["stages"]["full"]["outcome"]["class"]')" = failed ] || fail "not classified failed"
detail=$(jq_py "$WORK/probe/probe.json" 'ascii(j["stages"]["full"]["outcome"]["detail"])')
expect_contains "$detail" 'exited with code 3: RuntimeError: Gr\ufffd\ufffde xxx'
expect_contains "$detail" 'xxx...'

# tune, twice: the second run reads the failed baseline back from its cache (it was stored, as JSON).
for round in 1 2; do
  set +e
  "$SATURATE" tune --json --budget 30s --out "$WORK/tune" --cache "$WORK/tune.db" -- "$PY" "$WORK/fail.py" \
    >"$WORK/tune.json" 2>"$WORK/tune.err"
  rc=$?
  set -e
  cat "$WORK/tune.err"
  no_abort "$rc" "$WORK/tune.err"
  expect_contains "$(cat "$WORK/tune.err")" "the baseline run failed"
done
echo "ok"
