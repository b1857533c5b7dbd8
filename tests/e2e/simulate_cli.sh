#!/usr/bin/env bash
# `saturate simulate`: every policy completes every run of a generated 64-GPU sweep; the JSON carries the same
# figures; runs written with --write-runs and read back with --runs-file give the same results; 1,000 GPUs x
# 10,000 runs under all five policies take well under the 10 s budget; bad input exits 2.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

table=$("$SATURATE" simulate --gpus 64 --runs 500)
echo "$table"
for p in sequential one-per-gpu fixed-k threshold saturate; do
  echo "$table" | grep -E "^$p +[0-9.]+ .* 500/500\$" >/dev/null || fail "policy $p did not complete all runs"
done
expect_contains "$table" "500 runs on 64 GPUs"

"$SATURATE" simulate --gpus 64 --runs 500 --json --write-runs "$WORK/runs.json" >"$WORK/a.json"
"$SATURATE" simulate --gpus 64 --runs-file "$WORK/runs.json" --json >"$WORK/b.json"
"$PY" - "$WORK/a.json" "$WORK/b.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert [r["policy"] for r in a["results"]] == ["sequential", "one-per-gpu", "fixed-k", "threshold", "saturate"]
assert a["results"] == b["results"], "the written runs do not reproduce the results"
by = {r["policy"]: r for r in a["results"]}
assert by["saturate"]["oom_events"] == 0
assert by["saturate"]["makespan_s"] < by["one-per-gpu"]["makespan_s"]
assert all(r["runs_completed"] == 500 for r in a["results"])
PY

big=$("$SATURATE" simulate --gpus 1000 --runs 10000 --json)
"$PY" -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["wall_s"] < 10, j["wall_s"]; assert all(r["runs_completed"] == 10000 for r in j["results"])' "$big"

expect_exit 2 "$SATURATE" simulate --policy saturat
expect_contains "$ERR" "did you mean 'saturate'?"
expect_exit 2 "$SATURATE" simulate --runs-file "$WORK/missing.json"
expect_contains "$ERR" "missing.json"
expect_exit 2 "$SATURATE" simulate --fixed-k 0
echo PASS
