#!/usr/bin/env bash
# A loader-bound configuration (no workers, an expensive per-sample transform) gets the loader verdict from the
# three stages of the automatic instrumentation (the script unmodified: no import, nothing parseable), and again
# without any helper, from the script's printed step and data times (--parse). The script's `import saturate` path
# reaches its verdict in probe_compute_bound.sh.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"

args=(--model tiny --workers 0 --transform-cost 12 --batch-size 32)
probe_unmodified loader "${args[@]}"
# The loader alone is the narrowest pipe: well below the compute ceiling.
jq_py "$WORK/auto.json" 'j["stages"]["loader"]["samples_per_s"] < 0.5 * j["stages"]["compute"]["samples_per_s"] or sys.exit("loader not below compute")'

probe_json parsed --budget 30s --parse saturate-example -- "${TRAIN[@]}" "${args[@]}" --no-helper
expect_bottleneck "$WORK/parsed.json" loader
[ "$(jq_py "$WORK/parsed.json" 'j["helper"]')" = False ] || fail "--no-helper run should not report through the helper"
[ -f "$WORK/parsed/probe.json" ] || fail "--out should keep probe.json"
echo ok
