#!/usr/bin/env bash
# A script that raises PyTorch's CUDA out-of-memory error above a hidden batch size (100) is searched to exactly
# that boundary and never recommended past it; the knobs it does not read are skipped with a note; the report
# files are written; and a second tune of the same command takes every trial from the cache.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

tune_json first --budget 2m --trial-budget 10s -- "${OOM[@]}" --limit 100
R="$WORK/first.json"
show_decisions "$R"
[ "$(jq_py "$R" 'j["largest_fitting"]["batch_size"]')" = 100 ] || fail "largest fitting batch is not 100"
jq_py "$R" 'j["recommended"]["batch_size"] <= 100 and j["fastest"]["batch_size"] <= 100 or sys.exit("picked past 100")'
# Every trial above the boundary failed as out of memory; 101 itself was tried.
jq_py "$R" 'all(t["exit_class"] == "gpu_oom" for t in j["trials"] if t["knobs"].get("batch_size", 0) > 100) or sys.exit("a run past 100 did not fail")'
jq_py "$R" 'any(t["knobs"].get("batch_size") == 101 for t in j["trials"]) or sys.exit("101 never tried")'
[ "$(jq_py "$R" 'j["failure"]')" = None ] || fail "the tune failed"
# The knobs oom_at_batch.py does not read are skipped, and say so.
for knob in workers amp preload; do
  note=$(jq_py "$R" "[k['note'] for k in j['knobs'] if k['name'] == '$knob'][0]")
  expect_contains "$note" "does not expose it"
done
# The files, and a page that holds its charts inline.
for f in results.json results.csv report.html; do [ -s "$WORK/first/$f" ] || fail "--out lacks $f"; done
html=$(cat "$WORK/first/report.html")
expect_contains "$html" "Throughput against batch size"
expect_contains "$html" "<svg"
expect_not_contains "$html" "http"
rows=$(($(wc -l <"$WORK/first/results.csv") - 1))
[ "$rows" -eq "$(jq_py "$R" 'len(j["trials"])')" ] || fail "results.csv has $rows rows"
expect_contains "$(jq_py "$R" 'j["recommended_command"]')" "SATURATE_KNOBS="

# The same tune again: every trial comes from the cache, and the answer is the same.
start=$(date +%s)
tune_json second --budget 2m --trial-budget 10s -- "${OOM[@]}" --limit 100
[ "$(jq_py "$WORK/second.json" 'j["trials_run"]')" = 0 ] || fail "the second tune ran trials again"
[ "$(jq_py "$WORK/second.json" 'j["trials_cached"] == len(j["trials"])')" = True ] || fail "not every trial cached"
[ "$(jq_py "$WORK/second.json" 'j["recommended"]')" = "$(jq_py "$R" 'j["recommended"]')" ] ||
  fail "the cached tune recommends something else"
[ $(($(date +%s) - start)) -lt 20 ] || fail "a fully cached tune should take seconds"
echo ok
