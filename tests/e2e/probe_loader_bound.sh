#!/usr/bin/env bash
# A loader-bound configuration (no workers, an expensive per-sample transform) gets the loader verdict, with the
# helper's three stages and again without the helper, from the script's printed step and data times (--parse).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

args=(--model tiny --workers 0 --transform-cost 12 --batch-size 32)
probe_json helper --budget 60s -- "${TRAIN[@]}" "${args[@]}"
expect_bottleneck "$WORK/helper.json" loader
[ "$(jq_py "$WORK/helper.json" 'j["stages"]["loader"]["ran"] and j["stages"]["compute"]["ran"]')" = True ] ||
  fail "the helper's loader and compute stages should have run"
# The loader alone is the narrowest pipe: well below the compute ceiling.
jq_py "$WORK/helper.json" 'j["stages"]["loader"]["samples_per_s"] < 0.5 * j["stages"]["compute"]["samples_per_s"] or sys.exit("loader not below compute")'

probe_json parsed --budget 30s --parse saturate-example -- "${TRAIN[@]}" "${args[@]}" --no-helper
expect_bottleneck "$WORK/parsed.json" loader
[ "$(jq_py "$WORK/parsed.json" 'j["helper"]')" = False ] || fail "--no-helper run should not report through the helper"
[ -f "$WORK/parsed/probe.json" ] || fail "--out should keep probe.json"

# The same script unmodified (no import, nothing parseable): the same verdict from the automatic instrumentation.
probe_unmodified loader "${args[@]}"
echo ok
