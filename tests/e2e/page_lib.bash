# Opens report pages in headless Chromium (Debian's) and reads what it rendered; sourced after lib.bash.
#
# render_page HTML WIDTH [JS]: loads a copy of HTML in a WIDTH px wide window, runs the page's own scripts, then
# a measuring script of ours appended to the copy (the page itself is not changed), and prints the DOM as Chromium
# left it. The measuring script writes, as attributes of <body>:
#   data-scroll-width, data-inner-width  the page's laid-out width and the window's (the page fits: <=)
#   data-probe                           what JS (an expression, optional) evaluated to, as text
# page_attr DOM NAME prints one of them.
# screenshot_page HTML WIDTH HEIGHT PNG takes a screenshot.
# Exits 77 (skipped) where there is no chromium.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
need_chromium() { [ -n "$CHROMIUM" ] || { echo "skip: no chromium"; exit 77; }; }

render_page() {
  local html=$1 width=$2 js=${3:-"''"} copy
  copy="$WORK/render-$(basename "$html" .html)-$width.html"
  "$PY" - "$html" "$copy" "$js" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = sys.argv[3]
script = """<script>
(function () {
  var b = document.body;
  b.setAttribute('data-scroll-width', document.documentElement.scrollWidth);
  b.setAttribute('data-inner-width', window.innerWidth);
  var v; try { v = (function () { return %s; })(); } catch (e) { v = 'error: ' + e; }
  b.setAttribute('data-probe', String(v));
})();
</script>
""" % probe
assert "</body>" in page, "no </body> in the page"
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", script + "</body>"))
PY
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$width,900" \
    --virtual-time-budget=2000 --dump-dom "file://$copy" 2>/dev/null
}

page_attr() {
  # The DOM through stdin: a long page is more than one argument may hold.
  printf '%s' "$1" |
    "$PY" -c 'import re, sys; m = re.search(r"<body[^>]*\s%s=\"([^\"]*)\"" % re.escape(sys.argv[1]), sys.stdin.read()); print(m.group(1) if m else "")' "$2" |
    sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g'
}

# Fails unless the page rendered at WIDTH fits the window (no sideways scrolling of the page itself).
expect_fits() {
  local dom=$1 width=$2 scroll inner
  scroll=$(page_attr "$dom" data-scroll-width)
  inner=$(page_attr "$dom" data-inner-width)
  [ -n "$scroll" ] && [ -n "$inner" ] || fail "the measuring script did not run (no data-scroll-width)"
  [ "$scroll" -le "$inner" ] || fail "at ${width}px the page is ${scroll}px wide: it does not fit the ${inner}px window"
}

screenshot_page() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$2,$3" \
    --screenshot="$4" "file://$1" >/dev/null 2>&1 || fail "chromium could not take a screenshot of $1"
  [ -s "$4" ] || fail "no screenshot of $1"
}
