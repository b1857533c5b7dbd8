#include "report/page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sat::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Page, Escapes) { EXPECT_EQ(XmlEscape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;"); }

TEST(Page, ShellIsSelfContainedAndEscaped) {
  PageOptions o;
  o.title = "probe: train.py --tag <b>";
  o.heading = "saturate probe";
  o.sub_html = "<code>x</code>";
  std::string page = Page(o, "<p>body</p>\n");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(page, HasSubstr("<title>probe: train.py --tag &lt;b&gt;</title>"));
  EXPECT_THAT(page, HasSubstr("name=\"viewport\""));
  EXPECT_THAT(page, HasSubstr("<p class=\"sub\"><code>x</code></p>"));
  EXPECT_THAT(page, HasSubstr("@media print"));
  // Nothing fetched, and no script where nothing needs one.
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("src=")));
  EXPECT_THAT(page, Not(HasSubstr("refresh")));
  EXPECT_THAT(page, HasSubstr("</html>\n"));
}

TEST(Page, ScriptOnlyForSortableTablesAndCopyButtons) {
  PageOptions o;
  EXPECT_THAT(Page(o, CopyBlock("saturate tune -- python3 train.py")), HasSubstr("<script>"));
  EXPECT_THAT(Page(o, "<table class=\"sortable\"></table>"), HasSubstr("<script>"));
  EXPECT_THAT(Page(o, "<table></table>"), Not(HasSubstr("<script>")));
}

TEST(Page, RefreshWhenAsked) {
  PageOptions o;
  o.refresh_s = 10;
  EXPECT_THAT(Page(o, ""), HasSubstr("<meta http-equiv=\"refresh\" content=\"10\">"));
}

TEST(Page, CopyBlockEscapesTheCommand) {
  EXPECT_THAT(CopyBlock("a && b <c>"), HasSubstr("<pre>a &amp;&amp; b &lt;c&gt;</pre>"));
}

TEST(Page, BoxAndWide) {
  EXPECT_THAT(Box("x", true), HasSubstr("class=\"box fail\""));
  EXPECT_THAT(Box("x"), HasSubstr("class=\"box\""));
  EXPECT_THAT(Wide("<svg/>"), HasSubstr("<div class=\"wide\">"));
  EXPECT_EQ(Section("Runs", "runs"), "<h2 id=\"runs\">Runs</h2>\n");
}

}  // namespace
}  // namespace sat::report
