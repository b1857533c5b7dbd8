#!/usr/bin/env bash
# Trials adapt to slow steps: a script whose steps take 0.5 s cannot show 30 steady steps in the default 10 s
# trial, so tune makes trials longer (fewer, longer trials) and measures again; with --trial-budget fixed too
# short, every trial is too slow to measure in this budget, and the report claims no speed-up.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

PATTERN='step \d+ time (?P<step_s>[0-9.]+)'
CMD=("$PY" "$SATURATE_SOURCE_DIR/tests/e2e/scripts/step_time.py" --base-s 0.45 --batch-size '{batch_size}')

tune_json longer --budget 2m --parse "$PATTERN" --knob batch_size=32:64 -- "${CMD[@]}"
R="$WORK/longer.json"
show_decisions "$R"
jq_py "$R" '"\n".join(j["warnings"])'
jq_py "$R" 'any("trials now run up to" in w for w in j["warnings"]) or sys.exit("trials were not made longer")'
# The baseline ran again, longer than the first 10 s, and that run counts: converged (about 30 steady steps), or
# settled with at least 30.
jq_py "$R" '[t["wall_s"] > 11 and (t["converged"] or (t["settled"] and t["steady_steps"] >= 30)) or sys.exit("the baseline was not measured longer: %s" % t) for t in j["trials"][:1]]'
jq_py "$R" 'not any(t["too_slow"] for t in j["trials"]) or sys.exit("a trial stayed too slow")'

# A fixed trial budget too short for 30 steps: too slow to measure, and nothing is claimed from it.
tune_json capped --fresh --budget 40s --trial-budget 8s --parse "$PATTERN" --knob batch_size=32:64 -- "${CMD[@]}"
R="$WORK/capped.json"
show_decisions "$R"
jq_py "$R" 'j["trials"][0]["too_slow"] or sys.exit("the baseline should be too slow to measure")'
jq_py "$R" 'any("too slow to measure in this budget" in w and "--trial-budget caps it" in w for w in j["warnings"]) or sys.exit("no too-slow warning")'
jq_py "$R" 'j["speedup"]["claim"] != "faster" or sys.exit("a speed-up was claimed from estimates that do not count")'
jq_py "$R" 'not any("×" in d["text"] for d in j["decisions"]) or sys.exit("a decision claims a ratio")'
[ "$(jq_py "$R" 'j["recommended"]["batch_size"]')" = 32 ] || fail "a batch was adopted on estimates that do not count"
echo ok
