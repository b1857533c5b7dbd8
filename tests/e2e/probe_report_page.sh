#!/usr/bin/env bash
# probe's report.html, written with --out and named at the end: opened in headless Chromium, the pipe marked
# narrowest is the loader of a loader-bound run (the verdict's), the step bar and the throughput curves are drawn,
# the command to run next is there to copy, and the page fits a narrow window.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/page_lib.bash"

"$SATURATE" probe --out "$WORK/out" --budget 45s -- "${TRAIN[@]}" --model tiny --workers 0 --transform-cost 12 \
  --batch-size 32 >"$WORK/console.txt" 2>"$WORK/err"
cat "$WORK/console.txt" "$WORK/err"
page="$WORK/out/report.html"
[ -f "$page" ] || fail "--out should write report.html"
expect_contains "$(tail -n1 "$WORK/err")" "report: $WORK/out/report.html"
expect_bottleneck "$WORK/out/probe.json" loader

need_chromium
js="[document.querySelector('.pipe.narrowest .name').firstChild.textContent.trim(), document.querySelectorAll('.pipe').length, document.querySelectorAll('.sharebar .part').length, document.querySelectorAll('svg.chart').length, document.querySelector('.copy pre').textContent.indexOf('saturate tune -- ') === 0].join('|')"
for width in 400 1200; do
  dom=$(render_page "$page" "$width" "$js")
  IFS='|' read -r narrowest pipes parts charts copy <<<"$(page_attr "$dom" data-probe)"
  [ "$narrowest" = loader ] || fail "the narrowest pipe should be the loader, the page marks '$narrowest'"
  [ "$pipes" = 5 ] || fail "expected 5 pipes, the page drew $pipes"
  [ "$parts" -ge 2 ] || fail "the step bar should have its data wait and model parts, it has $parts"
  [ "$charts" -ge 3 ] || fail "expected a throughput curve per stage, the page drew $charts charts"
  [ "$copy" = true ] || fail "the command to run next should start with 'saturate tune -- '"
  expect_fits "$dom" "$width"
done

screenshot_page "$page" 1100 1500 "$WORK/probe.png"
if [ -n "${SATURATE_SCREENSHOT_DIR:-}" ]; then cp "$WORK/probe.png" "$SATURATE_SCREENSHOT_DIR/probe-report.png"; fi
echo ok
