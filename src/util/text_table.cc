#include "util/text_table.h"

#include <algorithm>

#include "util/utf8.h"

namespace sat {

std::string TextTable(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows) {
  const size_t n = columns.size();
  auto cell = [](const std::vector<std::string>& row, size_t c) -> std::string {
    if (c >= row.size()) return "";
    std::string text = row[c];
    std::replace_if(text.begin(), text.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
    return text;
  };
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; ++c) width[c] = columns[c].min_width;
  for (const auto& row : rows) {
    for (size_t c = 0; c < n; ++c) width[c] = std::max(width[c], DisplayWidth(cell(row, c)));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < n; ++c) {
      const std::string text = cell(row, c);
      const std::string pad(width[c] - DisplayWidth(text), ' ');
      if (c > 0) line += "  ";
      line += columns[c].align == TextColumn::Align::kRight ? pad + text : text + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace sat
