#!/usr/bin/env bash
# The example trainer tuned through the helper's knobs, which name the script's own flags
# (saturate.knob("workers", args.workers, flag="--workers")): the script's own values are read as the baseline,
# a loader-only scan of workers runs against the compute ceiling, preload is tried in full training, every trial
# sets the knobs with the flags, the recommendation is the user's own command line (no SATURATE_ variable, no
# PYTHONPATH: it runs without saturate), and the page with its charts renders in headless Chromium and fits a
# narrow window.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/tune_lib.bash"

tune_json ex --budget 2m30s --trial-budget 12s "${TUNE_LOOSE[@]}" --knob workers --knob preload -- "${TRAIN[@]}" --model tiny \
  --workers 0 --batch-size 32
R="$WORK/ex.json"
show_decisions "$R"
[ "$(jq_py "$R" '[k["script_value"] for k in j["knobs"]]')" = "[0, 'off']" ] || fail "the script's own values not read"
jq_py "$R" 'sum(1 for t in j["trials"] if t["mode"] == "loader") >= 2 or sys.exit("no loader scan")'
jq_py "$R" 'any(t["mode"] == "full" and t["knobs"].get("preload") == "on" for t in j["trials"]) or sys.exit("preload not tried")'
jq_py "$R" 'j["throughput"]["recommended"] > 0 or sys.exit("no confirmed recommendation")'
# The budget plan, said after the baseline: every step's first trials, in trials of the length measured so far.
jq_py "$R" '"trials of ~" in (j["plan"] or "") and "confirm 1" in j["plan"] or sys.exit("no plan: %s" % j["plan"])'
# Every trial set the knobs through the script's flags, and the script took them.
jq_py "$R" 'all(t["knobs_seen"].get(k) == v for t in j["trials"] for k, v in t["knobs"].items()) or sys.exit("a knob was not taken")'
jq_py "$R" 'all(set(t["set_by_flags"]) == set(t["knobs"]) for t in j["trials"][1:]) or sys.exit("a knob went through SATURATE_KNOBS")'
[ "$(jq_py "$R" '[(k["delivery"], k["flag"]) for k in j["knobs"]]')" = "[('flag', '--workers'), ('flag', '--preload')]" ] ||
  fail "the knobs' flags: $(jq_py "$R" 'j["knobs"]')"
cmd=$(jq_py "$R" 'j["recommended_command"]')
expect_not_contains "$cmd" "SATURATE_"
expect_not_contains "$cmd" "PYTHONPATH"
expect_contains "$cmd" "--workers $(jq_py "$R" 'j["recommended"]["workers"]')"

if command -v chromium >/dev/null; then
  chromium --headless --no-sandbox --disable-gpu --screenshot="$WORK/ex.png" --window-size=1200,2000 \
    "file://$WORK/ex/report.html" >/dev/null 2>&1 || fail "chromium could not render report.html"
  [ "$(stat -c %s "$WORK/ex.png")" -gt 20000 ] || fail "the screenshot of report.html is (nearly) empty"
  # The shared look (report/page.h): the page fits a narrow window, and the trial table sorts by samples/s.
  source "$(dirname "$0")/page_lib.bash"
  dom=$(render_page "$WORK/ex/report.html" 420 "document.querySelectorAll('table.sortable tbody tr').length")
  expect_fits "$dom" 420
  [ "$(page_attr "$dom" data-probe)" = "$(jq_py "$R" 'len(j["trials"])')" ] || fail "the trial table should list every trial"
fi
echo ok
