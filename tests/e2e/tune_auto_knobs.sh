#!/usr/bin/env bash
# An unmodified DataLoader script (no import saturate, no flags, num_workers=0 written into it) whose samples wait
# on storage (2 ms each, no CPU), so the loader alone is far below the model: tune sets the loader's workers
# through the automatic instrumentation (`--knob num_workers` matches its "workers" knob by role), scans them
# loader-only, confirms them in full training, recommends more workers as an injected knob, spells out the
# DataLoader change, and gives a command to paste without saturate's environment variables. The console,
# results.json and report.html all say so. (The same rule through the helper's saturate.knob() is tune_example_trainer's.)
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"
# TUNE_LOOSE (tune_lib.bash): besides which trials ran, this test asserts a speed-up above 1.5, far outside ±5%.

cat >"$WORK/unmodified.py" <<'PY'
import time
import torch
import torch.nn.functional as F


class SlowStorage(torch.utils.data.Dataset):
    """Samples that take 2 ms each to arrive, as from a remote file system: waiting, not computing."""

    def __len__(self):
        return 10_000_000

    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.full((16,), float(i % 7)), i % 2


loader = torch.utils.data.DataLoader(SlowStorage(), batch_size=32, num_workers=0)
model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
PY
line=$(grep -n "DataLoader(SlowStorage" "$WORK/unmodified.py" | cut -d: -f1)

# From the script's folder, as people run it: the loader's site is then "unmodified.py:LINE".
cd "$WORK"
tune_json auto --budget 3m --trial-budget 12s "${TUNE_LOOSE[@]}" --knob num_workers=0:4 -- "$PY" "$WORK/unmodified.py"
R="$WORK/auto.json"
show_decisions "$R"
[ "$(jq_py "$R" 'j["auto"]')" = True ] || fail "the automatic instrumentation did not report"
[ "$(jq_py "$R" 'j["injected"]')" = "['num_workers']" ] || fail "num_workers should be an injected knob"
site=$(jq_py "$R" 'j["loader"]["site"]')
[ "$site" = "unmodified.py:$line" ] || fail "the training loader's site is $site, not unmodified.py:$line"
workers=$(jq_py "$R" 'j["recommended"]["num_workers"]')
[ "$workers" -gt 0 ] || fail "a loader-bound script should get workers, got $workers"
# Every trial that set the knob ran with it: the loader reported the value saturate injected.
jq_py "$R" 'all(t["knobs_seen"].get("num_workers") == t["knobs"]["num_workers"] for t in j["trials"] if "num_workers" in t["knobs"]) or sys.exit("an injected value did not reach the loader")'
jq_py "$R" 'j["speedup"]["claim"] == "faster" and j["speedup"]["ratio"] > 1.5 or sys.exit("no clear speed-up: %s" % j["speedup"])'
jq_py "$R" 'j["throughput"]["compute_ceiling"] > 3 * j["throughput"]["loader_ceiling"] or sys.exit("not loader-bound")'
jq_py "$R" 'sum(1 for t in j["trials"] if t["mode"] == "loader") >= 3 or sys.exit("no loader scan")'
expect_contains "$(cat "$WORK/auto/report.html")" "Loader throughput against workers"
want="DataLoader at unmodified.py:$line: DataLoader(..., num_workers=$workers)"
[ "$(jq_py "$R" 'j["code_changes"][0]["text"]')" = "$want" ] || fail "code change: $(jq_py "$R" 'j["code_changes"]')"
# The command to paste runs the script as it is: an injected knob does nothing outside saturate.
[ "$(jq_py "$R" 'j["recommended_command"]')" = "$PY $WORK/unmodified.py" ] || fail "the pasteable command carries knobs"
expect_contains "$(cat "$WORK/auto/report.html")" "Injected by saturate"
expect_contains "$(cat "$WORK/auto/report.html")" "<code>DataLoader(..., num_workers=$workers)</code>"

# The console report, from the same trials (all taken from the cache).
"$SATURATE" tune --budget 3m --trial-budget 12s "${TUNE_LOOSE[@]}" --cache "$WORK/tune.db" --knob num_workers=0:4 -- "$PY" \
  "$WORK/unmodified.py" >"$WORK/console.txt" 2>/dev/null
cat "$WORK/console.txt"
text=$(cat "$WORK/console.txt")
expect_contains "$text" "Injected by saturate (the script has no flag for them): num_workers."
expect_contains "$text" "  - $want"
expect_not_contains "$text" "SATURATE_KNOBS"

# --no-auto: the script reports nothing, so there is nothing to tune, and tune says what to do. Its baseline runs to
# the trial budget: 6 s is three times what the script needs to import torch and start reporting (the tune above
# converged its first trial in ~5 s), so a run --no-auto failed to silence would still report inside it.
expect_exit 1 "$SATURATE" tune --budget 1m --trial-budget 6s --cache "$WORK/tune.db" --no-auto \
  --knob num_workers=0:4 -- "$PY" "$WORK/unmodified.py"
expect_contains "$ERR" "reported no throughput"
echo ok
