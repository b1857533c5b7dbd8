#include "telemetry/summary.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sat::telemetry {
namespace {

TEST(Percentile, InterpolatesLinearlyBetweenClosestRanks) {
  std::vector<double> v = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(Percentile(v, 0.0), 10);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 25);     // h = 1.5
  EXPECT_DOUBLE_EQ(Percentile(v, 0.95), 38.5);  // h = 2.85
  EXPECT_DOUBLE_EQ(Percentile(v, 1.0), 40);
  EXPECT_DOUBLE_EQ(Percentile({7}, 0.95), 7);
}

TEST(Summarize, ComputesEveryStatisticOfUnsortedValues) {
  std::optional<Summary> s = Summarize({5, 1, 4, 2, 3});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 5u);
  EXPECT_DOUBLE_EQ(s->mean, 3);
  EXPECT_DOUBLE_EQ(s->p50, 3);
  EXPECT_DOUBLE_EQ(s->p95, 4.8);  // h = 3.8
  EXPECT_DOUBLE_EQ(s->min, 1);
  EXPECT_DOUBLE_EQ(s->max, 5);
}

TEST(Summarize, NothingToSummariseIsNullopt) {
  EXPECT_EQ(Summarize(std::vector<double>{}), std::nullopt);
  EXPECT_EQ(Summarize(std::vector<double>{NAN}), std::nullopt);
  EXPECT_EQ(Summarize({NAN, 2.0})->count, 1u);
}

TEST(Summarize, SkipsSamplesWhereTheFieldIsNotAvailable) {
  std::vector<Sample> samples(4);
  samples[0].host.cpu_util_pct = 90;
  samples[2].host.cpu_util_pct = 50;  // samples 1 and 3 have no value: N/A, not 0
  std::optional<Summary> s =
      Summarize(samples, [](const Sample& x) -> std::optional<double> { return x.host.cpu_util_pct; });
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 2u);
  EXPECT_DOUBLE_EQ(s->mean, 70);
  EXPECT_DOUBLE_EQ(s->min, 50);

  EXPECT_EQ(Summarize(samples, [](const Sample& x) -> std::optional<double> { return x.host.load1; }), std::nullopt);
}

}  // namespace
}  // namespace sat::telemetry
