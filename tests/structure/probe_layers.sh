#!/usr/bin/env bash
# probe's record stands apart from its orchestrator, and measuring does not draw (issue 41):
#   - no file of src/probe/ but the orchestrator (probe.cc) and its rules test includes probe/probe.h: the verdict,
#     storage, what-if and report read the record (probe/probe_result.h), not the header that runs the stages;
#   - tune and the shared measurement flags (cli/measurement_flags.*) include no probe header: the what-if model
#     they use is core's (core/what_if.h);
#   - the files that run a probe or a tune (probe/probe.cc, tune/tune.cc) include none of the writers of
#     probe.json, results.* or report.html: their callers write them from the result.
# Each violation is named with its file and line.
set -euo pipefail
src="${SATURATE_SOURCE_DIR:?}/src"
problems=""
add() { [ -z "$1" ] || problems+="$1"$'\n'; }

add "$(grep -n '#include "probe/probe.h"' "$src"/probe/* |
       grep -vE '^[^:]*/probe/(probe\.cc|probe_rules_test\.cc):' || true)"
add "$(grep -n '#include "probe/' "$src"/tune/* "$src"/cli/measurement_flags.* || true)"
add "$(grep -nE '#include "(probe/(html_report|outputs|report)|tune/(html_report|results))\.h"' \
       "$src/probe/probe.cc" "$src/tune/tune.cc" || true)"
if [ -n "$problems" ]; then
  echo "FAIL: probe's layers (record below, orchestrator on top, writers with the callers) are crossed:" >&2
  printf '%s' "$problems" >&2
  exit 1
fi
# The layers are still there, so the rules above still say something.
for f in probe/probe.h probe/probe_result.h probe/outputs.h core/what_if.h; do
  [ -f "$src/$f" ] || { echo "FAIL: src/$f is gone; update this test with its new home" >&2; exit 1; }
done
grep -q '#include "probe/probe.h"' "$src/probe/probe.cc" ||
  { echo "FAIL: probe/probe.cc no longer includes probe/probe.h" >&2; exit 1; }
grep -q '#include "probe/probe_result.h"' "$src/probe/verdict.h" ||
  { echo "FAIL: probe/verdict.h no longer reads the record from probe/probe_result.h" >&2; exit 1; }
echo ok
