#!/usr/bin/env bash
# A needless per-step metric computation gets the step-overhead verdict, through the helper's phase timing and
# through the automatic instrumentation's after-step time. From the printed metrics_s time (--parse), the chain is
# checked in parts: the saturate-example pattern reads metrics_s as the "metrics" phase
# (src/measure/line_parser_test.cc, SaturateExamplePreset), the stage averages it over the lines
# (src/core/stage_rules_test.cc, ParsedLinesGiveTheNamedPhasesShares), and the verdict from parsed lines is the
# helper's (src/probe/verdict_test.cc, StepOverheadFromParsedLinesGivesTheSameVerdict); --parse runs end to end in
# probe_loader_bound.sh.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

# --target 0.05 (here and the unmodified run): the verdict rests on the step's phase shares, not on a rate's
# last percent; 112 s in the suite with the default ±2%, 48 s alone with ±5%.
args=(--model tiny --preload on --workers 1 --batch-size 8 --metric-every-step)
probe_json helper --budget 60s --target 0.05 -- "${TRAIN[@]}" "${args[@]}"
expect_bottleneck "$WORK/helper.json" step-overhead
jq_py "$WORK/helper.json" 'j["verdict"]["next"]' | grep -q metrics || fail "next should name the metrics phase"

# The same script unmodified (no import, nothing parseable): the same verdict from the automatic instrumentation.
PROBE_TARGET=0.05 probe_unmodified step-overhead "${args[@]}"
jq_py "$WORK/auto.json" 'j["verdict"]["next"]' | grep -qi 'after' || fail "next should name the after-step work"
echo ok
