#!/usr/bin/env bash
# A loader-bound configuration (no workers, an expensive per-sample transform) gets the loader verdict from the
# three stages of the automatic instrumentation (the script unmodified: no import, nothing parseable), and again
# without any helper, from the script's printed step and data times (--parse). The script's `import saturate` path
# reaches its verdict in probe_compute_bound.sh.
# The first probe's report.html, written with --out and named at the end, is opened in headless Chromium: the pipe
# marked narrowest is the loader (the verdict's), the step bar and the throughput curves are drawn, the command to
# run next is there to copy, and the page fits a narrow window.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
source "$(dirname "$0")/page_lib.bash"

args=(--model tiny --workers 0 --transform-cost 12 --batch-size 32)
# ±5% for the automatic run: its loader stage runs at under half the compute stage's rate, far outside either
# interval. The --parse run below keeps the default ±2%.
PROBE_TARGET=0.05 probe_unmodified loader "${args[@]}"
# The loader alone is the narrowest pipe: well below the compute ceiling.
jq_py "$WORK/auto.json" 'j["stages"]["loader"]["samples_per_s"] < 0.5 * j["stages"]["compute"]["samples_per_s"] or sys.exit("loader not below compute")'

# Its page.
page="$WORK/auto/report.html"
[ -f "$page" ] || fail "--out should write report.html"
expect_contains "$(tail -n1 "$WORK/auto.err")" "report: $page"
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

# 45 s: beside a compiler on 2 cores the loader's own CPU work swung so much that 21.5 s of steady data gave ±155%
# and no verdict with 30 s; probe stops as soon as its estimate is tight, so on a quiet machine it takes less.
# A step line every step (--log-every 1, a line each ~0.25 s): with TRAIN's one line in 5 steps (~1.2 s apart) probe
# saw too few lines to place the end of warm-up, counted 18 s of it, and ran out its 45 s at ±2.3%; with a line a
# step it found a 2-s warm-up and converged to ±1.6% in 19 s (frozen binary, load 2).
probe_json parsed --budget 45s --parse saturate-example -- "${TRAIN[@]}" "${args[@]}" --no-helper --log-every 1
expect_bottleneck "$WORK/parsed.json" loader
[ "$(jq_py "$WORK/parsed.json" 'j["helper"]')" = False ] || fail "--no-helper run should not report through the helper"
[ -f "$WORK/parsed/probe.json" ] || fail "--out should keep probe.json"
echo ok
