#include "sweep/metrics.h"

#include <gtest/gtest.h>

namespace sat::sweep {
namespace {

using Values = std::vector<std::pair<std::string, double>>;

TEST(MetricPattern, ReadsNamedGroupsOfEveryMatch) {
  auto simple = MetricPattern::Create(R"(val_loss=(?P<val_loss>[0-9.e+-]+)(?: acc=(?P<acc>[0-9.]+))?)", "p");
  ASSERT_TRUE(simple);
  EXPECT_EQ(simple->names(), (std::vector<std::string>{"val_loss", "acc"}));
  EXPECT_EQ(simple->Match("epoch 3 val_loss=0.25 acc=0.91"), (Values{{"val_loss", 0.25}, {"acc", 0.91}}));
  EXPECT_EQ(simple->Match("val_loss=1e-3"), (Values{{"val_loss", 0.001}})) << "acc did not take part";
  EXPECT_EQ(simple->Match("val_loss=nan"), Values{}) << "not a finite number";
  EXPECT_EQ(simple->Match("nothing here"), Values{});
  auto repeated = MetricPattern::Create(R"(loss=(?P<loss>[0-9.]+))", "p");
  EXPECT_EQ(repeated->Match("loss=1 loss=2"), (Values{{"loss", 1}, {"loss", 2}}));
}

// A progress bar in another encoding, or bytes cut mid-character, on the same line as the metric.
TEST(MetricPattern, MatchesLinesWithInvalidUtf8) {
  auto pattern = MetricPattern::Create(R"(val_loss=(?P<val_loss>[0-9.]+))", "p");
  ASSERT_TRUE(pattern);
  EXPECT_EQ(pattern->Match("\xff\xfe epoch 3 \xe9t\xe9 val_loss=0.25 \xc3"), (Values{{"val_loss", 0.25}}));
}

TEST(MetricPattern, RejectsBadExpressionsAndPatternsWithoutNames) {
  auto bad = MetricPattern::Create("loss=(?P<loss>[0-9.]+", "--metric-pattern");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().exit_code, kExitUsage);
  EXPECT_EQ(bad.error().message,
            "--metric-pattern is not a valid regular expression: missing closing parenthesis at offset 21");
  auto unnamed = MetricPattern::Create("loss=([0-9.]+)", "--metric-pattern");
  ASSERT_FALSE(unnamed);
  EXPECT_EQ(unnamed.error().message,
            "--metric-pattern needs named groups, one per metric, e.g. 'val_loss=(?P<val_loss>[0-9.e+-]+)'");
}

TEST(MetricLog, KeepsTheLastOfEachNameAndTheBestOfTheSweepMetricBeyondItsCap) {
  MetricLog log(MetricSpec{"loss", Goal::kMinimize, std::nullopt}, /*max_points=*/3);
  const double losses[] = {5, 4, 3, 1, 2, 2.5};
  for (double v : losses) log.Add(MetricPoint{"loss", v, std::nullopt, 0});
  log.Add(MetricPoint{"acc", 0.5, std::nullopt, 0});
  log.Add(MetricPoint{"acc", 0.7, std::nullopt, 0});
  std::vector<std::pair<std::string, double>> kept;
  for (const auto& p : log.Points()) kept.emplace_back(p.name, p.value);
  EXPECT_EQ(kept, (Values{{"loss", 5}, {"loss", 4}, {"loss", 3}, {"loss", 1}, {"loss", 2.5}, {"acc", 0.7}}));
  EXPECT_EQ(log.dropped(), 5u);
  EXPECT_EQ(log.Last("loss"), 2.5);
  EXPECT_FALSE(log.Last("f1"));
}

}  // namespace
}  // namespace sat::sweep
