#include "report/page.h"

#include <fmt/core.h>

namespace sat::report {
namespace {

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px auto; max-width: 1150px; padding: 0 12px; color: #222; line-height: 1.4; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.sub { color: #555; font-size: 13px; } code { overflow-wrap: anywhere; }
.box { background: #f4f8fc; border: 1px solid #c9dcef; border-radius: 6px; padding: 12px 16px; }
.box.fail { background: #fdf1f0; border-color: #efc9c5; }
pre { background: #272822; color: #f8f8f2; padding: 10px; border-radius: 4px; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 3px 8px; text-align: left; vertical-align: top; }
td[data-v] { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { color: #b03a2e; }
table.sortable th { cursor: pointer; } table.sortable th:after { content: " \2195"; color: #aaa; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
.small { display: flex; flex-wrap: wrap; gap: 8px; }
figure { margin: 0; max-width: 100%; } figcaption { font-size: 12px; color: #555; max-width: 560px; }
svg.chart { max-width: 100%; height: auto; }
.wide { overflow-x: auto; max-width: 100%; }
.pager { font-size: 12px; color: #555; margin: 4px 0; } .pager button { font-size: 12px; margin-left: 6px; }
.wide svg.chart { max-width: none; }
.copy { position: relative; } .copy pre { user-select: all; padding-right: 60px; }
.copy button { position: absolute; top: 6px; right: 6px; font-size: 12px; }
.warn { color: #8a5a00; }
.pipes { display: flex; flex-wrap: wrap; gap: 4px; align-items: flex-end; margin: 8px 0; }
.pipe { flex: 1 1 120px; min-width: 110px; max-width: 220px; text-align: center; font-size: 12px; }
.pipe .name { font-weight: bold; font-size: 13px; } .pipe .tag { background: #c0392b; color: #fff; border-radius: 3px; padding: 0 4px; font-size: 11px; }
.pipe .tube { height: 84px; display: flex; align-items: center; border-left: 2px solid #bbb; border-right: 2px solid #bbb; margin: 4px 0; }
.pipe .flow { width: 100%; background: #2e6fbf; border-radius: 3px; }
.pipe.narrowest .flow { background: #c0392b; } .pipe.unmeasured .flow { background: none; border: 1px dashed #aaa; }
.pipe .rate { font-variant-numeric: tabular-nums; } .pipe .detail { color: #666; font-size: 11px; }
.sharebar { display: flex; height: 26px; border-radius: 4px; overflow: hidden; background: #eee; font-size: 12px; }
.sharebar .part { color: #fff; white-space: nowrap; overflow: hidden; padding: 4px 4px 0; box-sizing: border-box; }
.legend { font-size: 12px; color: #444; margin: 4px 0 10px; } .legend span { margin-right: 14px; white-space: nowrap; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
@media print {
  body { max-width: none; margin: 0; } .copy button { display: none; }
  .wide { overflow: visible; } .wide svg.chart { max-width: 100%; } .pager button { display: none; }
  figure, svg, table, .pipes, .sharebar { break-inside: avoid; }
  .sharebar .part, .pipe .flow, .legend i { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
)";

// Sorts a table.sortable by the clicked column (numbers by their value, else text; again: the other way); pages a
// long table (report/table.h: its rows as JSON, one page of them in the DOM), all its rows drawn for printing; and
// copies a .copy block's command.
constexpr const char* kScript = R"(
function sortKey(value, text) { return value !== undefined && value !== null && value !== '' ? parseFloat(value) : text; }
function compareKeys(x, y, dir) {
  if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
  if (typeof x === 'number') return -1; if (typeof y === 'number') return 1;
  return String(x).localeCompare(String(y)) * dir;
}
function onSort(t, sortBy) {
  if (!t.classList.contains('sortable')) return;
  t.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir > 0 ? 'asc' : 'desc';
      sortBy(col, dir);
    });
  });
}
var drawWhole = [];
document.querySelectorAll('div.paged').forEach(function (box) {
  // The rows are read from their JSON at the first click or print, not as the page opens: it shows page 1 as is.
  var t = box.querySelector('table'), pager = box.querySelector('p.pager'), rows = null;
  var size = t.tBodies[0].rows.length, page = 0, whole = false;
  function data() { return rows || (rows = JSON.parse(box.querySelector('script.table-rows').textContent)); }
  function cell(c) { return typeof c === 'string' ? [c, null] : c; }
  pager.insertAdjacentHTML('beforeend', '<button type="button" disabled>previous</button>' +
    '<button type="button">next</button><button type="button">all rows</button>');
  var buttons = pager.querySelectorAll('button'), label = pager.firstChild;
  function draw(all) {
    var rows = data(), from = all ? 0 : page * size, to = all ? rows.length : Math.min(rows.length, from + size);
    var body = t.tBodies[0], rowsShown = document.createDocumentFragment();
    for (var i = from; i < to; i++) {
      var tr = document.createElement('tr');
      if (rows[i][0]) tr.className = rows[i][0];
      for (var j = 1; j < rows[i].length; j++) {
        var c = cell(rows[i][j]), td = document.createElement('td');
        td.textContent = c[0];
        if (c[1] !== null) td.setAttribute('data-v', c[1]);
        tr.appendChild(td);
      }
      rowsShown.appendChild(tr);
    }
    body.textContent = ''; body.appendChild(rowsShown);
    label.textContent = 'Rows ' + (from + 1) + '\u2013' + to + ' of ' + rows.length + '.';
    buttons[0].disabled = all || page === 0; buttons[1].disabled = all || to >= rows.length;
    buttons[2].textContent = whole ? 'by pages' : 'all rows';
  }
  buttons[0].addEventListener('click', function () { page--; draw(false); });
  buttons[1].addEventListener('click', function () { page++; draw(false); });
  buttons[2].addEventListener('click', function () { whole = !whole; page = 0; draw(whole); });
  onSort(t, function (col, dir) {
    data().sort(function (a, b) { var x = cell(a[col + 1] || ''), y = cell(b[col + 1] || '');
      return compareKeys(sortKey(x[1], x[0]), sortKey(y[1], y[0]), dir); });
    page = 0; draw(whole);
  });
  drawWhole.push(function (all) { draw(all || whole); });
});
window.addEventListener('beforeprint', function () { drawWhole.forEach(function (d) { d(true); }); });
window.addEventListener('afterprint', function () { drawWhole.forEach(function (d) { d(false); }); });
document.querySelectorAll('table.sortable').forEach(function (t) {
  if (t.closest('div.paged')) return;
  onSort(t, function (col, dir) {
    var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    function key(r) { var c = r.cells[col]; return c ? sortKey(c.dataset.v, c.textContent) : ''; }
    rows.sort(function (a, b) { return compareKeys(key(a), key(b), dir); });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
document.querySelectorAll('.copy button').forEach(function (b) {
  b.addEventListener('click', function () {
    var text = b.parentNode.querySelector('pre').textContent;
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { b.textContent = 'copied'; });
  });
});
)";

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Page(const PageOptions& o, const std::string& body) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  if (o.refresh_s > 0) out += fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", o.refresh_s);
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", XmlEscape(o.title), kStyle);
  out += fmt::format("<h1>{}</h1>\n", XmlEscape(o.heading));
  if (!o.sub_html.empty()) out += fmt::format("<p class=\"sub\">{}</p>\n", o.sub_html);
  out += body;
  if (!o.footer_html.empty()) out += fmt::format("<p class=\"sub\">{}</p>\n", o.footer_html);
  const bool scripted = body.find("class=\"sortable\"") != std::string::npos ||
                        body.find("class=\"table-rows\"") != std::string::npos ||
                        body.find("<div class=\"copy\">") != std::string::npos;
  if (scripted) out += fmt::format("<script>{}</script>\n", kScript);
  return out + "</body>\n</html>\n";
}

std::string Section(const std::string& title, const std::string& id) {
  if (id.empty()) return fmt::format("<h2>{}</h2>\n", XmlEscape(title));
  return fmt::format("<h2 id=\"{}\">{}</h2>\n", XmlEscape(id), XmlEscape(title));
}

std::string Figure(const std::string& content, const std::string& caption) {
  return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>\n", content, XmlEscape(caption));
}

std::string Box(const std::string& inner, bool bad) {
  return fmt::format("<div class=\"box{}\">\n{}</div>\n", bad ? " fail" : "", inner);
}

std::string Wide(const std::string& content) { return "<div class=\"wide\">\n" + content + "</div>\n"; }

std::string CopyBlock(const std::string& text) {
  return fmt::format("<div class=\"copy\"><pre>{}</pre><button type=\"button\">copy</button></div>\n", XmlEscape(text));
}

}  // namespace sat::report
