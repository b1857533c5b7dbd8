#!/usr/bin/env bash
# How long headless Chromium takes to draw report pages: for each HTML file given, the time from navigation start to
# the end of the first layout (a script appended to a copy reads the page's width, which forces layout, then
# performance.now()), the median of 5 loads, in a 1200 px window. The pages come from
#   mkdir -p /tmp/pages && SATURATE_REPORT_PAGES=/tmp/pages build/report_bench --benchmark_filter=Page/
# Usage: bench/report_render.sh /tmp/pages/probe.html /tmp/pages/sweep-1000.html
set -euo pipefail
chromium=$(command -v chromium)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for page in "$@"; do
  copy="$tmp/$(basename "$page")"
  sed 's#</body>#<script>document.body.setAttribute("data-w", document.documentElement.scrollWidth); document.body.setAttribute("data-ms", performance.now().toFixed(0));</script></body>#' \
    "$page" >"$copy"
  times=()
  for _ in 1 2 3 4 5; do
    ms=$("$chromium" --headless --no-sandbox --disable-gpu --window-size=1200,900 --dump-dom "file://$copy" 2>/dev/null |
      grep -o 'data-ms="[0-9]*"' | grep -o '[0-9]*')
    times+=("$ms")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
  echo "$(basename "$page"): $(stat -c %s "$page") bytes, drawn in ${median} ms (median of 5: ${times[*]})"
done
