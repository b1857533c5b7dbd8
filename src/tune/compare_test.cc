#include "tune/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sat::tune {
namespace {

using ::testing::HasSubstr;

// A trial that ran and settled at `rate` with a 95% interval of ±`half` (a share).
Trial Measured(int id, double rate, double half = 0.02) {
  Trial t;
  t.id = id;
  t.exit_class = run::ExitClass::kStopped;
  t.samples_per_s = rate;
  t.ci_low = rate * (1 - half);
  t.ci_high = rate * (1 + half);
  t.converged = half <= 0.03;
  t.settled = true;
  t.observations = 60;
  t.steady_steps = 50;
  return t;
}

TEST(Compare, AnEstimateCountsOnlyWhenSteadyWithEnoughObservations) {
  EXPECT_TRUE(Reliable(Measured(1, 100)));
  EXPECT_TRUE(Reliable(Measured(1, 100, 0.2)));  // wider than the target, still a valid interval

  Trial few = Measured(1, 100, 0.05);  // settled, not converged
  few.steady_steps = kMinSteadySteps - 1;
  EXPECT_FALSE(Reliable(few));
  Trial converged = Measured(1, 100, 0.02);  // stopped early by the estimator's own rule: counts
  converged.steady_steps = kMinSteadySteps - 1;
  EXPECT_TRUE(Reliable(converged));
  EXPECT_THAT(UnreliableWhy(few), HasSubstr("has too few steady steps (7 of the 8 needed)"));

  Trial slow = Measured(1, 100);
  slow.too_slow = true;
  EXPECT_FALSE(Reliable(slow));
  EXPECT_THAT(UnreliableWhy(slow), HasSubstr("too slow to measure in this budget"));

  Trial drifting = Measured(1, 100, 0.4);
  drifting.settled = false;
  EXPECT_FALSE(Reliable(drifting));
  EXPECT_EQ(UnreliableWhy(drifting), "did not settle (±40%)");
  drifting.unsettled_why = "still drifting";
  EXPECT_EQ(UnreliableWhy(drifting), "did not settle (still drifting)");

  Trial no_interval = Measured(1, 100);
  no_interval.ci_low = no_interval.ci_high = 0;
  EXPECT_FALSE(Reliable(no_interval));

  Trial failed = Measured(1, 100);
  failed.exit_class = run::ExitClass::kGpuOom;
  EXPECT_FALSE(Reliable(failed));
  EXPECT_EQ(UnreliableWhy(failed), "");  // failures say why elsewhere
  EXPECT_EQ(UnreliableWhy(Measured(1, 100)), "");
}

TEST(Compare, OrdersOnlyMeasurementsWhoseIntervalsAreApart) {
  EXPECT_EQ(Compare(Measured(1, 110), Measured(2, 100)), Order::kFaster);  // 107.8 > 102
  EXPECT_EQ(Compare(Measured(1, 100), Measured(2, 110)), Order::kSlower);
  EXPECT_EQ(Compare(Measured(1, 103), Measured(2, 100)), Order::kNotDistinguishable);  // 100.9 < 102
  // Far apart point estimates with wide intervals that overlap: no order.
  EXPECT_EQ(Compare(Measured(1, 200, 0.4), Measured(2, 100, 0.4)), Order::kNotDistinguishable);
  // A measurement that does not count is never ordered, however far apart.
  Trial few = Measured(1, 1000, 0.05);
  few.steady_steps = 5;
  EXPECT_EQ(Compare(few, Measured(2, 100)), Order::kNotDistinguishable);
  EXPECT_EQ(Compare(Measured(2, 100), few), Order::kNotDistinguishable);
}

TEST(Compare, FasterByNeedsBothTheGainAndSeparateIntervals) {
  EXPECT_TRUE(FasterBy(Measured(1, 110, 0.01), Measured(2, 100, 0.01), 0.05));
  EXPECT_FALSE(FasterBy(Measured(1, 104, 0.01), Measured(2, 100, 0.01), 0.05));  // apart, but under the gain
  EXPECT_FALSE(FasterBy(Measured(1, 150, 0.3), Measured(2, 100, 0.3), 0.05));    // the gain, but overlapping
  EXPECT_FALSE(FasterBy(Measured(1, 100), Measured(2, 110), 0.0));
}

TEST(Compare, RatiosOnlyWhenDistinguishable) {
  EXPECT_DOUBLE_EQ(*RatioIfDistinguishable(Measured(1, 300), Measured(2, 100)), 3.0);
  EXPECT_DOUBLE_EQ(*RatioIfDistinguishable(Measured(1, 100), Measured(2, 200)), 0.5);
  EXPECT_FALSE(RatioIfDistinguishable(Measured(1, 300, 0.9), Measured(2, 100, 0.9)));
}

TEST(Compare, SaysWhyTwoMeasurementsCannotBeToldApart) {
  EXPECT_EQ(NotDistinguishable(Measured(1, 103), Measured(2, 100), "from amp=off"),
            "not distinguishable from amp=off (103 samples/s ±2% against 100 samples/s ±2%: the 95% intervals "
            "overlap)");
  Trial slow = Measured(7, 500, 0.05);
  slow.too_slow = true;
  slow.steady_steps = 4;
  EXPECT_THAT(NotDistinguishable(Measured(1, 100), slow),
              HasSubstr("trial 7 is too slow to measure in this budget (4 steady steps of the 8 needed)"));
  EXPECT_EQ(RateWithInterval(Measured(1, 1234.6)), "1,235 samples/s ±2%");
}

TEST(Compare, PicksAmongReliablePointsOnly) {
  Trial b16 = Measured(1, 900), b32 = Measured(2, 970), b64 = Measured(3, 1000), b128 = Measured(4, 5000);
  b128.steady_steps = 3;  // a wild estimate that does not count
  b128.converged = false;
  std::vector<TrialPoint> points = {{16, &b16}, {32, &b32}, {64, &b64}, {128, &b128}};
  EXPECT_EQ(FastestReliable(points), 64);
  EXPECT_EQ(SmallestWithinReliable(points, 0.03), 32);
  EXPECT_EQ(SmallestWithinReliable(points, 0.15), 16);
  b16.settled = b32.settled = b64.settled = false;
  b16.converged = b32.converged = b64.converged = false;
  EXPECT_FALSE(FastestReliable(points));
  EXPECT_FALSE(SmallestWithinReliable(points, 0.03));
}

}  // namespace
}  // namespace sat::tune
