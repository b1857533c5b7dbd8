// An HTML table for the report pages: text cells (escaped here), numbers right-aligned with their value kept for
// sorting, a class per row (e.g. "bad" for a failed trial), and optionally sortable by a click on a column's
// header (the page's inline script, report/page.h). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sat::report {

struct Cell {
  std::string text;
  // A number: the cell is right-aligned and a sortable table orders the column by it. Unset: text (sorted after
  // the numbers).
  std::optional<double> value;
};

// A text cell, and a number cell shown as `text`.
Cell Text(std::string text);
Cell Number(std::string text, std::optional<double> value);

struct Row {
  std::vector<Cell> cells;
  std::string css_class;  // "" or e.g. "bad"
};

struct Table {
  std::vector<std::string> headers;
  std::vector<Row> rows;
  bool sortable = false;
  std::string id;  // the table's id attribute, "" for none
};

// The table as <table> with a <thead> and a <tbody>, inside a box that scrolls sideways when it is wider than the
// window (report/page.h Wide); a number cell is <td data-v="value">. A table of more than kPageRows rows shows
// them a page at a time: its first page as HTML, then a pager and every row as JSON
// (<script type="application/json" class="table-rows">) that the page's script pages, sorts, and shows whole
// for printing. The browser then lays out a page of rows, not all of them: a 1,000-run sweep opens at once.
inline constexpr size_t kPageRows = 100;
std::string RenderTable(const Table& table);

}  // namespace sat::report
