#include "report/table.h"

#include <fmt/core.h>

#include <cmath>

#include "report/page.h"

namespace sat::report {

Cell Text(std::string text) { return Cell{std::move(text), std::nullopt}; }

Cell Number(std::string text, std::optional<double> value) {
  if (value && !std::isfinite(*value)) value.reset();
  return Cell{std::move(text), value};
}

std::string RenderTable(const Table& t) {
  std::string o = "<table";
  if (!t.id.empty()) o += fmt::format(" id=\"{}\"", XmlEscape(t.id));
  if (t.sortable) o += " class=\"sortable\"";
  o += "><thead><tr>";
  for (const std::string& h : t.headers) o += "<th>" + XmlEscape(h) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (const Row& row : t.rows) {
    o += row.css_class.empty() ? "<tr>" : fmt::format("<tr class=\"{}\">", XmlEscape(row.css_class));
    for (const Cell& c : row.cells) {
      if (c.value) {
        o += fmt::format("<td data-v=\"{:.6g}\">{}</td>", *c.value, XmlEscape(c.text));
      } else {
        o += "<td>" + XmlEscape(c.text) + "</td>";
      }
    }
    o += "</tr>\n";
  }
  o += "</tbody></table>\n";
  if (t.rows.size() > kLongTable) return "<div class=\"wide long\">\n" + o + "</div>\n";
  return Wide(o);
}

}  // namespace sat::report
