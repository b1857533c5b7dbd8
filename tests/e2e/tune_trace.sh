#!/usr/bin/env bash
# `saturate tune --trace` on the CPU: after the search, the recommendation runs once more under torch.profiler; the
# trace lands in --out and is summarised in results.json, which also carries the FLOP count and each trial's
# achieved FLOP/s (no MFU without a GPU).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

tune_json traced --budget 20s --trace --knob batch_size=16:32 -- "${TRAIN[@]}" --model tiny --preload on \
  --no-helper --log-every 0
r="$WORK/traced.json"
jq_py "$r" 'j["trace"]'
jq_py "$r" '(j["trace"]["error"] is None and j["trace"]["path"].endswith("/traced/trace.json") and j["trace"]["summary"]["steps"] == 3) or sys.exit("no trace: %s" % j["trace"])' ||
  fail "results.json should summarise the recommendation's trace"
[ -s "$WORK/traced/trace.json" ] || fail "the trace should be in --out"
jq_py "$r" '(j["flops"]["count"]["per_sample"] > 0 and j["flops"]["baseline"]["flops_per_s"] > 0 and j["flops"]["baseline"]["mfu"] is None) or sys.exit("flops: %s" % j["flops"])' ||
  fail "results.json should carry the FLOP count and the baseline's FLOP/s"
jq_py "$r" 'j["trials"][0]["flops_rate"]["flops_per_s"] > 0 or sys.exit("trial 1 has no FLOP/s")' ||
  fail "the baseline trial should have an achieved FLOP/s"
head -1 "$WORK/traced/results.csv" | grep -q ',flops_per_s,mfu$' || fail "results.csv should end with flops_per_s,mfu"
echo ok
