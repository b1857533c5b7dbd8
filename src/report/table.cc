#include "report/table.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "report/page.h"

namespace sat::report {
namespace {

// One <tr> of HTML.
std::string RowHtml(const Row& row) {
  std::string o = row.css_class.empty() ? "<tr>" : fmt::format("<tr class=\"{}\">", XmlEscape(row.css_class));
  for (const Cell& c : row.cells) {
    if (c.value) {
      o += fmt::format("<td data-v=\"{:.6g}\">{}</td>", *c.value, XmlEscape(c.text));
    } else {
      o += "<td>" + XmlEscape(c.text) + "</td>";
    }
  }
  return o + "</tr>\n";
}

// Every row as JSON for the page's script: [[class, cell, ...], ...], a cell being its text, or [text, value]
// for a number. No '<' is left in it, so no string in it can end the <script> element that holds it.
std::string RowsJson(const std::vector<Row>& rows) {
  nlohmann::json all = nlohmann::json::array();
  for (const Row& row : rows) {
    nlohmann::json r = nlohmann::json::array({row.css_class});
    for (const Cell& c : row.cells) {
      if (c.value) r.push_back(nlohmann::json::array({c.text, *c.value}));
      else r.push_back(c.text);
    }
    all.push_back(std::move(r));
  }
  std::string text = all.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch == '<') out += "\\u003c";
    else out += ch;
  }
  return out;
}

}  // namespace

Cell Text(std::string text) { return Cell{std::move(text), std::nullopt}; }

Cell Number(std::string text, std::optional<double> value) {
  if (value && !std::isfinite(*value)) value.reset();
  return Cell{std::move(text), value};
}

std::string RenderTable(const Table& t) {
  const bool paged = t.rows.size() > kPageRows;
  std::string o = "<table";
  if (!t.id.empty()) o += fmt::format(" id=\"{}\"", XmlEscape(t.id));
  if (t.sortable) o += " class=\"sortable\"";
  o += "><thead><tr>";
  for (const std::string& h : t.headers) o += "<th>" + XmlEscape(h) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  const size_t shown = paged ? kPageRows : t.rows.size();
  for (size_t i = 0; i < shown; ++i) o += RowHtml(t.rows[i]);
  o += "</tbody></table>\n";
  if (!paged) return Wide(o);
  // The first page as HTML (the page reads without its script), every row as data the script pages and sorts.
  return fmt::format("<div class=\"paged\">\n{}<p class=\"pager\">Rows 1&ndash;{} of {}.</p>\n"
                     "<script type=\"application/json\" class=\"table-rows\">{}</script>\n</div>\n",
                     Wide(o), shown, t.rows.size(), RowsJson(t.rows));
}

}  // namespace sat::report
