#!/usr/bin/env bash
# --budget bounds the whole tune: a short budget stops the search early and keeps what was measured; a second
# tune with more time resumes from the cache instead of starting over, and with the room it has, its batch round
# rests on readings back to back (--back-to-back, on by default): the script's own size measured again right after
# the fastest, which the decision cites.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

start=$(date +%s)
tune_json short --budget 20s --trial-budget 8s -- "${OOM[@]}" --limit 100
took=$(($(date +%s) - start))
echo "a 20s tune took ${took}s"
# The budget holds (the slack covers start-up and the last trial's stop).
[ "$took" -le 30 ] || fail "a 20s budget took ${took}s"
jq_py "$WORK/short.json" 'j["wall_s"] <= 25 or sys.exit("wall_s over budget")'
[ "$(jq_py "$WORK/short.json" 'j["budget_spent"]')" = True ] || fail "budget_spent should be true"
ran=$(jq_py "$WORK/short.json" 'j["trials_run"]')
[ "$ran" -ge 2 ] || fail "only $ran trials in 20s"
# What was measured is kept: a recommendation from it.
[ "$(jq_py "$WORK/short.json" 'j["recommended"] is not None')" = True ] || fail "no recommendation kept"

# More time: the trials already measured come from the cache and the search goes on to the end.
tune_json long --budget 2m --trial-budget 8s -- "${OOM[@]}" --limit 100
[ "$(jq_py "$WORK/long.json" 'j["trials_cached"]')" -ge "$ran" ] || fail "the second tune did not resume"
[ "$(jq_py "$WORK/long.json" 'j["largest_fitting"]["batch_size"]')" = 100 ] || fail "the resumed tune did not finish"
[ "$(jq_py "$WORK/long.json" 'j["budget_spent"]')" = False ] || fail "the resumed tune ran out of budget"
# A reading again for a decision: a full-training trial run again (repeat 2 on) right after a trial of other settings,
# cited by a decision of the full step.
"$PY" - "$WORK/long.json" <<'PY' || fail "no decision rested on readings back to back"
import json, sys
j = json.load(open(sys.argv[1]))
trials = {t["id"]: t for t in j["trials"]}
again = [t for t in j["trials"] if t["mode"] == "full" and t["step"] == "full" and t["repeat"] >= 2
         and any(u["id"] < t["id"] and u["knobs"] == t["knobs"] and u["repeat"] < 2 for u in j["trials"])
         and trials[t["id"] - 1]["knobs"] != t["knobs"]]
cited = [t["id"] for t in again if any(t["id"] in d["trials"] and d["step"] == "full" for d in j["decisions"])]
print("read again back to back:", [t["id"] for t in again], "cited:", cited)
sys.exit(0 if cited else 1)
PY
# --fresh, which ignores the cache, is checked on a real script after a tune of the same command in
# tune_slow_steps.sh (its capped run), and in src/tune/tune_rules_test.cc
# (ASecondTuneTakesEveryTrialFromTheCacheUnlessFreshOrAnotherCommand).
echo ok
