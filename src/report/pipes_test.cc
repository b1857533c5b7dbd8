#include "report/pipes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/share_bar.h"

namespace sat::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Pipes, WidthsFollowRatesAndTheNarrowestIsNamed) {
  Pipeline p;
  p.pipes = {{"storage", std::nullopt, "not measured", "page cache"},
             {"loader", 200.0, "200 samples/s", ""},
             {"compute", 800.0, "800 samples/s", ""}};
  p.narrowest = 1;
  p.narrowest_why = "loader 200 < compute 800";
  std::string html = RenderPipes(p);
  EXPECT_THAT(html, HasSubstr("<div class=\"pipe unmeasured\"><div class=\"name\">storage</div>"));
  EXPECT_THAT(html, HasSubstr("<div class=\"pipe narrowest\"><div class=\"name\">loader <span"));
  // The widest pipe is the full tube; a quarter of its rate is a quarter of its height.
  EXPECT_THAT(html, HasSubstr("style=\"height:84px\""));
  EXPECT_THAT(html, HasSubstr("style=\"height:21px\""));
  EXPECT_THAT(html, HasSubstr("<b>Narrowest: loader</b> — loader 200 &lt; compute 800"));
}

TEST(Pipes, NoneMarkedWithoutAVerdict) {
  Pipeline p;
  p.pipes = {{"loader", 1.0, "1 samples/s", ""}};
  EXPECT_THAT(RenderPipes(p), Not(HasSubstr("narrowest")));
}

TEST(ShareBar, PartsAreTheirShares) {
  std::string html = RenderShareBar({{"data wait", 0.6, "#c00"}, {"model", 0.35, "#00c"}, {"after-step", 0.05, "#0c0"},
                                     {"bad", -1, "#000"}});
  EXPECT_THAT(html, HasSubstr("width:60.00%"));
  EXPECT_THAT(html, HasSubstr(">data wait 60%</div>"));
  // Too narrow for its label inside: named in the legend only.
  EXPECT_THAT(html, HasSubstr("title=\"after-step 5%\"></div>"));
  EXPECT_THAT(html, HasSubstr("</i>after-step 5%</span>"));
  EXPECT_THAT(html, HasSubstr("width:0.00%"));
}

}  // namespace
}  // namespace sat::report
