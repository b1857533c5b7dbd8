#!/usr/bin/env bash
# The CLI surface of `saturate monitor`: nvidia-smi compatible CSV through the NVML stand-in, JSON lines,
# and clear usage errors (exit 2) for bad fields, intervals and indexes.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
export SATURATE_NVML_LIBRARY="$FAKE_NVML"

# nvidia-smi's header and value formats.
out=$("$SATURATE" monitor --query-gpu=index,name,utilization.gpu,memory.used,temperature.gpu,power.draw --format=csv -c 1)
echo "$out"
expect_contains "$(echo "$out" | head -n1)" "index, name, utilization.gpu [%], memory.used [MiB], temperature.gpu, power.draw [W]"
[ "$(echo "$out" | wc -l)" -eq 3 ] || fail "expected a header and one row per fake GPU"
expect_contains "$out" " MiB"
expect_contains "$out" " %"

# noheader,nounits and -i selecting one GPU.
out=$("$SATURATE" monitor --query-gpu=index,memory.total --format=csv,noheader,nounits -i 1 -c 2)
[ "$out" = "$(printf '1, 143771\n1, 143771')" ] || fail "noheader,nounits -i 1: got '$out'"

# Unsupported fields read N/A, never 0.
out=$(FAKE_NVML_UNSUPPORTED=fan,power "$SATURATE" monitor --query-gpu=fan.speed,power.draw --format=csv,noheader -c 1 -i 0)
[ "$out" = "[N/A], [N/A]" ] || fail "unsupported fields: got '$out'"

# JSON lines: numbers as numbers, null for N/A.
out=$(FAKE_NVML_UNSUPPORTED=fan "$SATURATE" monitor --query-gpu=index,fan.speed,memory.used --query-host=cpu.util --json -c 2 -lms 50 -i 0)
echo "$out"
$PY - "$out" <<'PY'
import json, sys
lines = sys.argv[1].strip().splitlines()
assert len(lines) == 2, lines
for line in lines:
    obj = json.loads(line)
    assert obj["fan.speed"] is None, obj
    assert isinstance(obj["memory.used"], (int, float)), obj
    assert obj["index"] == 0, obj
PY

# The host alone, without any driver: a plain note, the rest keeps working.
out=$(FAKE_NVML_NO_DRIVER=1 "$SATURATE" monitor --query-host=cpu.util,mem.total,mem.available --format=csv -c 2 -lms 50 2>"$WORK/err")
expect_contains "$out" "mem.total [MiB]"
expect_contains "$(cat "$WORK/err")" "no NVIDIA driver"

# GPU fields without a GPU: no row for a GPU that does not exist (the CSV header alone, no JSON line), one notice.
out=$(FAKE_NVML_NO_DRIVER=1 "$SATURATE" monitor --query-gpu=timestamp,index,utilization.gpu --query-host=cpu.util \
  --format=csv -c 2 -lms 50 2>"$WORK/err")
[ "$out" = "timestamp, index, utilization.gpu [%], cpu.util [%]" ] ||
  fail "no GPU, CSV: expected the header alone, got '$out'"
[ "$(grep -c "no NVIDIA driver" "$WORK/err")" -eq 1 ] || fail "no GPU: expected one notice, got '$(cat "$WORK/err")'"
expect_contains "$(cat "$WORK/err")" "--query-host"
out=$(FAKE_NVML_NO_DRIVER=1 "$SATURATE" monitor --query-gpu=index,memory.used --json -c 2 -lms 50 2>"$WORK/err")
[ -z "$out" ] || fail "no GPU, JSON: expected no lines, got '$out'"
[ "$(grep -c "no NVIDIA driver" "$WORK/err")" -eq 1 ] || fail "no GPU, JSON: expected one notice"

# Bad input: exit 2 and a message naming the input and the closest valid name.
expect_exit 2 "$SATURATE" monitor --query-gpu=utilisation.gpu --format=csv -c 1
expect_contains "$ERR" "utilisation.gpu"
expect_contains "$ERR" "utilization.gpu"
expect_exit 2 "$SATURATE" monitor --query-host=cpu.utl -c 1
expect_contains "$ERR" "cpu.util"
expect_exit 2 "$SATURATE" monitor -lms 5 -c 1
expect_contains "$ERR" "10 ms"
# An interval no deadline can hold (1e300 s would overflow a nanosecond clock): refused, named.
expect_exit 2 "$SATURATE" monitor -l 1e300 -c 1
expect_contains "$ERR" "longer than a year"
expect_exit 2 "$SATURATE" monitor --query-gpu=index --format=csv -i 7 -c 1
expect_contains "$ERR" "7"
expect_exit 2 "$SATURATE" monitor --format=xml -c 1
expect_contains "$ERR" "xml"
expect_exit 2 "$SATURATE" moniter
expect_contains "$ERR" "did you mean 'monitor'"

# --help carries an example; --version works.
expect_contains "$("$SATURATE" monitor --help)" "example:"
expect_contains "$("$SATURATE" --version)" "saturate"

# -f FILE -- CMD: the output file is saturate's, not the command's (no descriptor of it inherited).
"$SATURATE" monitor --query-host=cpu.util --format=csv -l 1 -f "$WORK/out.csv" -- \
  sh -c "ls -l /proc/\$\$/fd > '$WORK/child-fds.txt'" >/dev/null 2>&1
[ -s "$WORK/out.csv" ] || fail "-f wrote nothing"
expect_not_contains "$(cat "$WORK/child-fds.txt")" "out.csv"
echo ok
