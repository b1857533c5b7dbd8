#!/usr/bin/env bash
# A compute-bound configuration (data preloaded into RAM, a model that is heavy on CPU) gets the compute verdict
# through the helper (the script's `import saturate`). The console report ends with the verdict line. The automatic
# instrumentation of the same script, unmodified, reaches its verdict in probe_loader_bound.sh (and each loop
# shape's compute stage in tests/python/test_launch.py); --parse reaches its verdict end to end in
# probe_loader_bound.sh, and the compute verdict from parsed lines on a CPU is src/probe/verdict_test.cc's
# ComputeBoundOnTheCpuFromParsedLinesGivesTheSameVerdict.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

# --target 0.05: the compute verdict has a wide margin (the loader is far faster); 61 s with ±2%, 19 s with ±5%.
args=(--model resnet18 --preload on --workers 0 --batch-size 16 --image-size 64)
"$SATURATE" probe --budget 60s --target 0.05 --out "$WORK/console" -- "${TRAIN[@]}" "${args[@]}" >"$WORK/console.txt"
cat "$WORK/console.txt"
expect_bottleneck "$WORK/console/probe.json" compute
[ "$(grep -c '^verdict: compute' "$WORK/console.txt")" -eq 1 ] || fail "the report should end with one verdict line"
tail -n1 "$WORK/console.txt" | grep -q '^verdict: compute — .*; next: ' || fail "last line is not the verdict line"

echo ok
