#!/usr/bin/env bash
# `saturate probe --trace` on the CPU, on the example trainer unmodified (no import saturate): the full stage's
# torch.profiler trace lands beside probe.json and loads as JSON with its profiler steps in it; the report shows
# the FLOP count and achieved FLOP/s (no MFU without a GPU), and probe.json carries the FLOP and trace fields.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

"$SATURATE" probe --budget 30s --trace --out "$WORK/out" -- "${TRAIN[@]}" --model tiny --batch-size 16 \
  --preload on --no-helper --log-every 0 >"$WORK/report.txt"
cat "$WORK/report.txt"
report=$(cat "$WORK/report.txt")
expect_contains "$report" "flops: "
expect_contains "$report" "FLOP per sample (forward + backward"
expect_contains "$report" "FLOP/s (on a CPU: achieved FLOP/s only)"
expect_contains "$report" "trace: $WORK/out/trace.json (3 steps of "
expect_contains "$report" "no GPU activity in the trace"
expect_contains "$report" "top CPU ops (self time): "
expect_contains "$report" "aten::convolution_backward"

# The trace is Chrome-trace JSON with the profiled steps in it (Kineto writes {"traceEvents": [...]}, a torch built
# without Kineto, such as Debian's, the bare array).
steps='sorted({e["name"] for e in (j["traceEvents"] if isinstance(j, dict) else j) if e.get("name", "").startswith("ProfilerStep#")})'
jq_py "$WORK/out/trace.json" "$steps" | tee "$WORK/steps.txt"
[ "$(jq_py "$WORK/out/trace.json" "len($steps)")" = 3 ] || fail "the trace should hold 3 profiler steps"

# probe.json: the count, the achieved rate of full and compute, no MFU on a CPU, and the trace's summary.
jq_py "$WORK/out/probe.json" 'j["stages"]["full"]["flops"]' | tee "$WORK/flops.txt"
jq_py "$WORK/out/probe.json" '(lambda f, r: f["per_sample"] > 0 and f["method"] in ("module_hooks", "flop_counter") and f["device"] == "cpu" and r["flops_per_s"] > 0 and r["mfu"] is None)(j["stages"]["full"]["flops"], j["stages"]["full"]["flops_rate"]) or sys.exit("bad full flops")' ||
  fail "probe.json should carry the full stage's FLOP count and rate"
jq_py "$WORK/out/probe.json" 'j["stages"]["compute"]["flops_rate"]["flops_per_s"] > 0 or sys.exit("no compute rate")' ||
  fail "the compute stage should have an achieved FLOP/s"
jq_py "$WORK/out/probe.json" '(j["trace"]["summary"]["steps"] == 3 and j["trace"]["summary"]["gpu"] is False and j["trace"]["error"] is None) or sys.exit(str(j["trace"]))' ||
  fail "probe.json should summarise the trace"
echo ok
