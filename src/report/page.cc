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
/* A long table below the first screen is laid out when it is scrolled to: a 1,000-run sweep opens at once. */
.wide.long { content-visibility: auto; contain-intrinsic-size: auto 600px; }
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
  .wide { overflow: visible; } .wide svg.chart { max-width: 100%; } .wide.long { content-visibility: visible; }
  figure, svg, table, .pipes, .sharebar { break-inside: avoid; }
  .sharebar .part, .pipe .flow, .legend i { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
)";

// Sorts a table.sortable by the clicked column (numbers by their data-v, else text; again: the other way), and
// copies a .copy block's command.
constexpr const char* kScript = R"(
document.querySelectorAll('table.sortable').forEach(function (t) {
  t.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir > 0 ? 'asc' : 'desc';
      function key(r) { var c = r.cells[col]; if (!c) return ''; var v = c.dataset.v;
        return v !== undefined && v !== '' ? parseFloat(v) : c.textContent; }
      rows.sort(function (a, b) { var x = key(a), y = key(b);
        if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
        if (typeof x === 'number') return -1; if (typeof y === 'number') return 1;
        return String(x).localeCompare(String(y)) * dir; });
      rows.forEach(function (r) { body.appendChild(r); });
    });
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
