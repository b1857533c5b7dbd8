#!/usr/bin/env bash
# Retries that make sense: a script that raises the same exception every time is attempted twice, not three
# times, and the journal says why; a script whose error differs between attempts keeps all its retries.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"

cat >"$WORK/crash.py" <<'PY'
import argparse, os, time
p = argparse.ArgumentParser()
p.add_argument("--mode", required=True)
a = p.parse_args()
time.sleep(0.2)
if a.mode == "same":
    raise ValueError("the data set has no column 'label'")
# A different error each attempt: the attempt's process id is in it.
raise RuntimeError(f"flaky worker {os.getpid()}")
PY

cat >"$WORK/sweep.yaml" <<YAML
program: $WORK/crash.py
method: grid
command:
  - $PY
  - \${program}
  - \${args}
parameters:
  mode: {values: [same, differs]}
saturate:
  retries: 2
YAML

set +e
"$SATURATE" sweep "$WORK/sweep.yaml" --warmup 0.3s --window 0.3s >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
cat "$WORK/err" "$WORK/out"
[ "$rc" -eq 1 ] || fail "failed runs should make the sweep exit 1, got $rc"
journal="$WORK/sweep.journal"
states=$(journal_query "$journal" "SELECT json_extract(params_json, '$.mode'), state, attempts FROM runs ORDER BY idx")
[ "$states" = $'same|failed|2\ndiffers|failed|3' ] || fail "states and attempts: $states"
detail=$(journal_query "$journal" "SELECT detail FROM attempts a JOIN runs r ON r.key = a.run_key
  WHERE json_extract(r.params_json, '$.mode') = 'same' ORDER BY attempt_no DESC LIMIT 1")
expect_contains "$detail" "the same error as attempt 1 (failed: ValueError: the data set has no column 'label'): not retried"
expect_contains "$(cat "$WORK/err")" "not retried"
echo PASS
