#!/usr/bin/env bash
# A sweep's report.html: written beside the journal while the sweep runs (it reloads itself then), rewritten at the
# end, and again by `saturate sweep report` from the journal alone. Opened in headless Chromium: one bar per attempt
# on its GPU's lane (a flaky run's failed first attempt shows as retried), the page fits a narrow window, and the
# runs table sorts by a click on a column's name.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/sweep_lib.bash"
source "$(dirname "$0")/page_lib.bash"
export SATURATE_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_DEVICES=2

# Run 2 fails its first attempt (the marker file is not there yet) and finishes its second.
cat >"$WORK/flaky.py" <<'PY'
import argparse, os, sys, time
import saturate
p = argparse.ArgumentParser()
p.add_argument("--i", type=int, required=True)
a = p.parse_args()
marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flaked")
if a.i == 2 and not os.path.exists(marker):
    open(marker, "w").close()
    time.sleep(0.5)
    sys.exit("RuntimeError: flaky data shard")
for _ in saturate.track(range(30)):
    time.sleep(0.05)
print(f"loss={1.0 / a.i:.4f}", flush=True)
PY
cat >"$WORK/sweep.yaml" <<YAML
program: $WORK/flaky.py
method: grid
metric: {name: loss, goal: minimize}
command:
  - $PY
  - \${program}
  - \${args}
parameters:
  i: {values: [1, 2, 3, 4, 5, 6]}
saturate:
  retries: 1
  metric_pattern: 'loss=(?P<loss>[0-9.]+)'
YAML

page="$WORK/sweep.report.html"
"$SATURATE" sweep "$WORK/sweep.yaml" --warmup 0.3s --window 0.3s --max-per-gpu 2 --json >"$WORK/out.json" 2>"$WORK/err" &
pids+=($!)
# While it runs: the page is there and reloads itself.
wait_until "[ -f '$page' ] && grep -q 'http-equiv=\"refresh\"' '$page'" 60
wait_status "${pids[0]}"
pids=()
cat "$WORK/err"
[ "$RC" -eq 0 ] || fail "the sweep failed ($RC)"
[ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["report"])' "$WORK/out.json")" = "$page" ] ||
  fail "sweep --json should name the report"
grep -q 'http-equiv="refresh"' "$page" && fail "the finished sweep's page still reloads itself"

# From the journal alone, into another file.
rm "$page"
"$SATURATE" sweep report "$WORK/sweep.yaml" --json >"$WORK/report.json"
cat "$WORK/report.json"
[ -f "$page" ] || fail "sweep report should write $page"
[ "$("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["runs"], j["attempts"])' "$WORK/report.json")" = "6 7" ] ||
  fail "6 runs in 7 attempts expected"
expect_contains "$("$SATURATE" sweep report --help)" "saturate sweep report sweep.yaml"
expect_exit 2 "$SATURATE" sweep report "$WORK/nothing.yaml"
expect_contains "$ERR" "nothing"

need_chromium
# Rendered: the bars by outcome, the lanes, and a narrow window.
dom=$(render_page "$page" 420 "[document.querySelectorAll('rect.bar.attempt').length, document.querySelectorAll('rect.bar.attempt.retried').length, document.querySelectorAll('rect.bar.attempt.done').length, Array.prototype.map.call(document.querySelectorAll('svg.timeline text.lane'), function (t) { return t.textContent; }).join('+')].join(' ')")
read -r bars retried done lanes <<<"$(page_attr "$dom" data-probe)"
[ "$bars" = 7 ] || fail "expected 7 attempt bars, the page drew $bars"
[ "$retried" = 1 ] || fail "expected 1 retried attempt, the page drew $retried"
[ "$done" = 6 ] || fail "expected 6 done attempts, the page drew $done"
[ "$lanes" = "GPU 0+GPU 1" ] || fail "expected the lanes GPU 0 and GPU 1, got $lanes"
expect_fits "$dom" 420

# The runs table sorts: a click on "#" orders by index, a second click the other way.
order_js="(function () { var th = document.querySelector('#runs th'); var col = function () { return Array.prototype.map.call(document.querySelectorAll('#runs tbody tr'), function (r) { return r.cells[0].textContent; }).join(','); }; th.click(); var up = col(); th.click(); return up + ' ' + col(); })()"
dom=$(render_page "$page" 1000 "$order_js")
[ "$(page_attr "$dom" data-probe)" = "0,1,2,3,4,5 5,4,3,2,1,0" ] || fail "sorting the runs table by # gave: $(page_attr "$dom" data-probe)"
expect_fits "$dom" 1000

screenshot_page "$page" 1100 1300 "$WORK/sweep.png"
if [ -n "${SATURATE_SCREENSHOT_DIR:-}" ]; then cp "$WORK/sweep.png" "$SATURATE_SCREENSHOT_DIR/sweep-report.png"; fi
echo ok
