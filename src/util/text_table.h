// The console's tables of text (probe's stage table, tune's trials, a sweep's results): one layout for all.
//
// Each column is as wide as its widest cell, and at least its `min_width`, in display columns (util/utf8.h
// DisplayWidth: "±" is one column, a CJK character two), so a row with multi-byte text stays aligned. Columns are
// two spaces apart; left-aligned cells are padded after, right-aligned before; every line ends in "\n" without
// trailing spaces. A line break inside a cell becomes a space: a row is one line. Rows shorter than the columns get
// empty cells; cells past the columns are left out.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sat {

struct TextColumn {
  enum class Align { kLeft, kRight };
  Align align = Align::kLeft;
  size_t min_width = 0;
};

// The rows (a header, when there is one, is the first) laid out in `columns`.
std::string TextTable(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows);

}  // namespace sat
