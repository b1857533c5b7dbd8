#!/usr/bin/env bash
# A long table in a report page (a sweep of 1,000 runs, drawn by the same code as `saturate sweep report`, from
# report_bench's synthetic sweep): Chromium shows its first 100 rows, the pager pages through all 1,000, a click on a
# column's name sorts all of them (not only the page shown), "all rows" and printing show every row, and the page
# fits a narrow window. (The page without the script shows the first 100 rows: src/report/table_test.cc.)
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/page_lib.bash"
need_chromium
SATURATE_REPORT_PAGES="$WORK" "$REPORT_BENCH" --benchmark_filter='BM_SweepPage/1000$' --benchmark_min_time=0.001 >/dev/null
page="$WORK/sweep-1000.html"
[ -s "$page" ] || fail "report_bench should have written $page"

# What the table shows: its row count, the first row's run number, and the pager's words.
state="function () { var rows = document.querySelectorAll('#runs tbody tr'); return rows.length + ':' + (rows.length ? rows[0].cells[0].textContent : '') + ':' + document.querySelector('p.pager').firstChild.textContent; }"
click="function (text) { Array.prototype.filter.call(document.querySelectorAll('p.pager button'), function (b) { return b.textContent === text; })[0].click(); }"
steps="(function () { var state = $state, click = $click, out = [state()];
  click('next'); out.push(state()); click('next'); click('previous'); out.push(state());
  var th = document.querySelector('#runs th'); th.click(); th.click(); out.push(state());
  click('all rows'); out.push(state()); click('by pages');
  window.dispatchEvent(new Event('beforeprint')); out.push(state());
  window.dispatchEvent(new Event('afterprint')); out.push(state());
  return out.join('|'); })()"
dom=$(render_page "$page" 420 "$steps")
IFS='|' read -r first next back sorted all printing printed <<<"$(page_attr "$dom" data-probe)"
echo "first: $first | next: $next | back: $back | sorted: $sorted | all: $all | printing: $printing | printed: $printed"
[ "$first" = "100:0:Rows 1–100 of 1000." ] || fail "the page should open on runs 0-99, got '$first'"
[ "$next" = "100:100:Rows 101–200 of 1000." ] || fail "'next' should show runs 100-199, got '$next'"
[ "$back" = "100:100:Rows 101–200 of 1000." ] || fail "'next' then 'previous' should be back on runs 100-199, got '$back'"
[ "$sorted" = "100:999:Rows 1–100 of 1000." ] || fail "sorting by # the other way should put run 999 first, got '$sorted'"
[ "$all" = "1000:999:Rows 1–1000 of 1000." ] || fail "'all rows' should show all 1000, got '$all'"
[ "$printing" = "1000:999:Rows 1–1000 of 1000." ] || fail "printing should show all 1000 rows, got '$printing'"
[ "$printed" = "100:999:Rows 1–100 of 1000." ] || fail "after printing the table should show a page again, got '$printed'"
expect_fits "$dom" 420
echo ok
