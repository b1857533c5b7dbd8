#include "report/timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sat::report {
namespace {

using ::testing::HasSubstr;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = s.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

TEST(Timeline, OverlappingBarsGetRowsOfTheirOwn) {
  Timeline t;
  t.lanes = {"GPU 0", "GPU 1"};
  // GPU 0 holds three runs at once between 2 and 3; GPU 1 one after another.
  t.bars = {{"GPU 0", 0, 3, "#0a0", "#1", "", "done"}, {"GPU 0", 1, 4, "#0a0", "#2", "", "done"},
            {"GPU 0", 2, 5, "#a00", "#3", "", "failed"}, {"GPU 1", 0, 2, "#0a0", "#4", "", "done"},
            {"GPU 1", 2, 4, "#0a0", "#5", "", "done"}};
  EXPECT_EQ(LaneRows(t), (std::vector<int>{3, 1}));
  // A lane a bar names but the list lacks is added at the end.
  t.bars.push_back({"CPU pool", 0, 1, "#0a0", "#6", "", "done"});
  EXPECT_EQ(LaneRows(t), (std::vector<int>{3, 1, 1}));
}

TEST(Timeline, OneRectPerBarWithItsClassAndTitle) {
  Timeline t;
  t.title = "attempts <all>";
  t.lanes = {"GPU 0"};
  for (int i = 0; i < 7; ++i) {
    t.bars.push_back({"GPU 0", i * 10.0, i * 10.0 + 8, "#2a9d5b", "#" + std::to_string(i), "run " + std::to_string(i),
                      i == 3 ? "attempt oom" : "attempt done", i == 6});
  }
  t.legend = {{"done", "#2a9d5b"}};
  std::string svg = RenderTimeline(t);
  EXPECT_EQ(Count(svg, "<rect class=\"bar attempt"), 7u);
  EXPECT_EQ(Count(svg, "class=\"bar attempt oom\""), 1u);
  EXPECT_THAT(svg, HasSubstr("<title>run 3</title>"));
  EXPECT_THAT(svg, HasSubstr("attempts &lt;all&gt;"));
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray"));  // the open bar
  EXPECT_THAT(svg, HasSubstr(">GPU 0</text>"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("nan")));
}

TEST(Timeline, EmptyStillRenders) {
  Timeline t;
  std::string svg = RenderTimeline(t);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("nan")));
}

}  // namespace
}  // namespace sat::report
