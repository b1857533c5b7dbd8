#include "report/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace sat::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Table, CellsAreEscapedAndNumbersKeepTheirValue) {
  Table t;
  t.headers = {"#", "run <key>", "loss"};
  t.sortable = true;
  t.id = "runs";
  t.rows.push_back({{Number("1", 1), Text("a&b"), Number("0.25", 0.25)}, "bad"});
  t.rows.push_back({{Number("2", 2), Text("c"), Number("n/a", std::nan(""))}, ""});
  std::string html = RenderTable(t);
  EXPECT_THAT(html, HasSubstr("<table id=\"runs\" class=\"sortable\">"));
  EXPECT_THAT(html, HasSubstr("<th>run &lt;key&gt;</th>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"bad\">"));
  EXPECT_THAT(html, HasSubstr("<td>a&amp;b</td>"));
  EXPECT_THAT(html, HasSubstr("<td data-v=\"0.25\">0.25</td>"));
  // A value that is not a number sorts as text.
  EXPECT_THAT(html, HasSubstr("<td>n/a</td>"));
  EXPECT_THAT(html, Not(HasSubstr("nan")));
  // Wide tables scroll in their own box.
  EXPECT_THAT(html, HasSubstr("<div class=\"wide\">"));
}

TEST(Table, ALongTableShowsItsFirstPageAndCarriesEveryRowForTheScript) {
  Table t;
  t.headers = {"a", "b"};
  for (size_t i = 0; i < kPageRows; ++i) t.rows.push_back(Row{{Number(std::to_string(i), i), Text("x")}, ""});
  std::string short_table = RenderTable(t);
  EXPECT_THAT(short_table, Not(HasSubstr("table-rows")));
  EXPECT_THAT(short_table, Not(HasSubstr("pager")));

  t.rows.push_back(Row{{Number("100", 100), Text("</script><b>&")}, "bad"});
  t.rows.push_back(Row{{Number("n/a", std::nan("")), Text("y")}, ""});
  std::string html = RenderTable(t);
  // The first page as HTML: rows 0-99, not the two past it.
  EXPECT_THAT(html, HasSubstr("<td data-v=\"99\">99</td>"));
  EXPECT_THAT(html, Not(HasSubstr("<td data-v=\"100\">")));
  EXPECT_THAT(html, HasSubstr("<p class=\"pager\">Rows 1&ndash;100 of 102.</p>"));
  // Every row as JSON: a class, then each cell as its text or [text, value]; nothing in it ends the script early.
  const std::string open = "<script type=\"application/json\" class=\"table-rows\">";
  size_t from = html.find(open);
  ASSERT_NE(from, std::string::npos);
  from += open.size();
  size_t to = html.find("</script>", from);
  ASSERT_NE(to, std::string::npos);
  nlohmann::json rows = nlohmann::json::parse(html.substr(from, to - from));
  ASSERT_EQ(rows.size(), 102u);
  EXPECT_EQ(rows[0], nlohmann::json::parse(R"(["", ["0", 0], "x"])"));
  EXPECT_EQ(rows[100], nlohmann::json::parse(R"(["bad", ["100", 100], "</script><b>&"])"));
  // A value that is not a number is text.
  EXPECT_EQ(rows[101], nlohmann::json::parse(R"(["", "n/a", "y"])"));
}

TEST(Table, NotSortableByDefault) {
  Table t;
  t.headers = {"a"};
  EXPECT_THAT(RenderTable(t), Not(HasSubstr("sortable")));
}

}  // namespace
}  // namespace sat::report
