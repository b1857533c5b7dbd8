#!/usr/bin/env bash
# --budget bounds the whole tune: a short budget stops the search early and keeps what was measured; a second
# tune with more time resumes from the cache instead of starting over.
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
# --fresh, which ignores the cache, is checked on a real script after a tune of the same command in
# tune_slow_steps.sh (its capped run), and in src/tune/tune_rules_test.cc
# (ASecondTuneTakesEveryTrialFromTheCacheUnlessFreshOrAnotherCommand).
echo ok
