#!/usr/bin/env bash
# The helper's environment contract is set in exactly one non-test source file (src/measure/helper_env.cc): a
# quoted SATURATE_* name of the contract anywhere else under src/ (tests excepted) fails, naming the place.
set -euo pipefail
src="${SATURATE_SOURCE_DIR:?}/src"
names='SATURATE_(CHANNEL|RUN_ID|AUTO|AUTO_TARGET|REPORT_INTERVAL|MODE|SAMPLES_PER_STEP|TRACE|KNOBS)'
found=$(grep -rEn --include='*.cc' --include='*.h' "\"$names\"" "$src" | grep -v '_test\.cc:' |
        grep -v '^[^:]*/measure/helper_env\.\(cc\|h\):' || true)
if [ -n "$found" ]; then
  echo "FAIL: the helper's environment variables are set outside src/measure/helper_env.cc:" >&2
  echo "$found" >&2
  exit 1
fi
[ "$(grep -cE "\"$names\"" "$src/measure/helper_env.cc")" -ge 8 ] ||
  { echo "FAIL: src/measure/helper_env.cc no longer sets the contract" >&2; exit 1; }
echo ok
