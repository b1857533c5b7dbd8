#include "report/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

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

TEST(Table, ALongTableIsLaidOutWhenScrolledTo) {
  Table t;
  t.headers = {"a"};
  t.rows.assign(kLongTable, Row{{Text("x")}, ""});
  EXPECT_THAT(RenderTable(t), Not(HasSubstr("wide long")));
  t.rows.push_back(Row{{Text("x")}, ""});
  EXPECT_THAT(RenderTable(t), HasSubstr("<div class=\"wide long\">"));
}

TEST(Table, NotSortableByDefault) {
  Table t;
  t.headers = {"a"};
  EXPECT_THAT(RenderTable(t), Not(HasSubstr("sortable")));
}

}  // namespace
}  // namespace sat::report
