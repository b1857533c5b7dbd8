#!/usr/bin/env bash
# The script's own flags, found without being told: an unmodified argparse script (no placeholder, no import
# saturate) whose --batch-size and --workers reach its DataLoader. Tune sees the parsed options carry the
# DataLoader's values, proves the mapping with one run with the flags changed, and recommends the user's own
# command line with --batch-size N --workers M: no saturate variable, no PYTHONPATH. That exact line, run as
# pasted, builds its DataLoader with N and M and trains at the rate tune confirmed (read from the script's own
# clock).
# Checked elsewhere, without a tune of their own: click's options reach saturate as the same `flags` message as
# argparse's (tests/python/test_flags.py, test_click_options_values_and_sources and Typer's), which tune maps
# the same way whatever parsed them (src/tune/flag_map_test.cc); a decoy whose flags carry the loader's values
# but never reach it stays injected, with the decision saying so (src/tune/search_test.cc,
# Search.ProvesWhichOfTheScriptsOwnFlagsSetTheLoader, and FlagMap's Unproven).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

SCRIPT="$SATURATE_SOURCE_DIR/tests/e2e/scripts/flags_loader.py"
cd "$WORK"
# Its trials are capped at 12 s, which a cold start can eat: run first in a fresh clone's suite (CTest's COST order),
# right after the build pushed torch's files out of the page cache, its baseline made one step in 12 s and tune had
# nothing to compare. Torch is read in first; what is checked here is the flags.
"$PY" -c "import torch"
tune_json flags --budget 3m --trial-budget 12s "${TUNE_LOOSE[@]}" --knob workers=0:2 --knob batch_size=32:128 -- \
  "$PY" "$SCRIPT" --batch-size 64 --workers 0
R="$WORK/flags.json"
show_decisions "$R"
jq_py "$R" '"\n".join(j["from_flags"])'
[ "$(jq_py "$R" '{k["name"]: (k["delivery"], k["flag"]) for k in j["knobs"] if k["exposed"]}')" = \
  "{'workers': ('flag', '--workers'), 'batch_size': ('flag', '--batch-size')}" ] || fail "the flags were not mapped"
# The proof: one run with both flags changed, whose DataLoader reported the new values.
jq_py "$R" 'any(t["step"] == "flags" and t["set_by_flags"] == {"batch_size": "--batch-size", "workers": "--workers"} and t["knobs_seen"] == {"batch_size": 32, "workers": 1} for t in j["trials"]) or sys.exit("no proving run")'
expect_contains "$(jq_py "$R" 'j["from_flags"]')" "ran with --batch-size 32 and the training DataLoader had batch_size=32)"

n=$(jq_py "$R" 'j["recommended"]["batch_size"]')
m=$(jq_py "$R" 'j["recommended"]["workers"]')
cmd=$(jq_py "$R" 'j["recommended_command"]')
[ "$cmd" = "$PY $SCRIPT --batch-size $n --workers $m" ] || fail "recommended command: $cmd"
expect_not_contains "$cmd" "SATURATE_"
expect_not_contains "$cmd" "PYTHONPATH"
[ "$(jq_py "$R" 'j["injected"]')" = "[]" ] || fail "knobs still injected"
# The confirmation measured that command: its knobs went in as flags, nothing through SATURATE_KNOBS.
jq_py "$R" '[t for t in j["trials"] if t["step"] == "confirm"][0]["set_by_flags"] == {"batch_size": "--batch-size", "workers": "--workers"} or sys.exit("the confirmation did not run the flags")'
confirmed=$(jq_py "$R" 'j["throughput"]["recommended"]')

# As pasted, outside saturate (no SATURATE_ variable in its environment): the script's own lines say what it did.
env -u SATURATE -u SATURATE_SOURCE_DIR timeout 12 bash -c "$cmd" >"$WORK/pasted.txt" 2>&1 || true
head -2 "$WORK/pasted.txt"
[ "$(head -1 "$WORK/pasted.txt")" = "loader batch_size=$n num_workers=$m" ] || fail "the pasted command's DataLoader"
own=$("$PY" - "$WORK/pasted.txt" <<'PY'
import sys
rows = [tuple(map(float, l.split()[1::2])) for l in open(sys.argv[1]) if l.startswith("t ")]
rows = rows[len(rows) // 3:]  # past start-up and worker spin-up
print((rows[-1][1] - rows[0][1]) / (rows[-1][0] - rows[0][0]))
PY
)
echo "tune confirmed $confirmed samples/s; the pasted command's own clock: $own samples/s"
"$PY" -c "import sys; r = $own / $confirmed; sys.exit(0 if 0.75 <= r <= 1.33 else 'rates differ: %.2f' % r)"

echo ok
