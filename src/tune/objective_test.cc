#include "tune/objective.h"

#include <gtest/gtest.h>

#include "tune/compare.h"

namespace sat::tune {
namespace {

Trial Measured(core::StageKind mode, double rate, double half_width, std::optional<double> watts) {
  Trial t;
  t.request.mode = mode;
  t.exit_class = run::ExitClass::kStopped;
  t.samples_per_s = rate;
  t.ci_low = rate * (1 - half_width);
  t.ci_high = rate * (1 + half_width);
  t.converged = t.settled = true;
  t.steady_steps = 50;
  if (watts) {
    t.watts = *watts;
    t.joules_per_sample = *watts / rate;
  }
  return t;
}

TEST(Objective, NamesRoundTripAndAnUnknownOneIsRefused) {
  for (Objective o : {Objective::kThroughput, Objective::kEnergy, Objective::kCost})
    EXPECT_EQ(ParseObjective(ObjectiveName(o)), o);
  EXPECT_FALSE(ParseObjective("speed").has_value());
  EXPECT_FALSE(ParseObjective("").has_value());
}

TEST(Objective, EnergyScoresSamplesPerJouleWithTheThroughputsRelativeInterval) {
  Trial t = Measured(core::StageKind::kFull, 1000, 0.02, 250);  // 0.25 J per sample
  ApplyObjective(t, Objective::kEnergy);
  ASSERT_TRUE(t.score.has_value());
  EXPECT_DOUBLE_EQ(t.score->value, 4.0);
  EXPECT_DOUBLE_EQ(t.score->low, 4.0 * 0.98);
  EXPECT_DOUBLE_EQ(t.score->high, 4.0 * 1.02);
  EXPECT_EQ(t.score->unit, "samples/J");
  EXPECT_EQ(RateWithInterval(t), "4.00 samples/J ±2%");
  // Throughput and cost judge by samples/s: no score.
  ApplyObjective(t, Objective::kThroughput);
  EXPECT_FALSE(t.score.has_value());
  ApplyObjective(t, Objective::kCost);
  EXPECT_FALSE(t.score.has_value());
}

TEST(Objective, LoaderTrialsKeepTheirThroughputAndAMissingReadingCountsForNothing) {
  Trial loader = Measured(core::StageKind::kLoader, 5000, 0.02, 100);
  ApplyObjective(loader, Objective::kEnergy);
  EXPECT_FALSE(loader.score.has_value());

  Trial unread = Measured(core::StageKind::kCompute, 1000, 0.02, std::nullopt);
  ApplyObjective(unread, Objective::kEnergy);
  ASSERT_TRUE(unread.score.has_value());
  EXPECT_EQ(unread.score->value, 0);
  EXPECT_FALSE(Reliable(unread));
  EXPECT_EQ(UnreliableWhy(unread), "has no energy reading");
}

// The faster trial draws so much more power that it spends more joules per sample: throughput and energy order
// the two the other way round.
TEST(Objective, TheObjectiveDecidesWhichOfTwoTrialsIsBetter) {
  Trial fast = Measured(core::StageKind::kCompute, 2000, 0.02, 400);  // 5 samples/J
  Trial frugal = Measured(core::StageKind::kCompute, 1500, 0.02, 150);  // 10 samples/J
  EXPECT_EQ(Compare(fast, frugal), Order::kFaster);
  ApplyObjective(fast, Objective::kEnergy);
  ApplyObjective(frugal, Objective::kEnergy);
  EXPECT_EQ(Compare(fast, frugal), Order::kSlower);
  EXPECT_TRUE(FasterBy(frugal, fast, 0.5));
  EXPECT_DOUBLE_EQ(*RatioIfDistinguishable(frugal, fast), 2.0);
  EXPECT_DOUBLE_EQ(GainShare(Objective::kEnergy, 10, 5), 0.5) << "half the joules per sample";
  EXPECT_DOUBLE_EQ(GainShare(Objective::kThroughput, 2000, 1500), 2000.0 / 1500 - 1);
  const std::vector<TrialPoint> points = {{64, &fast}, {16, &frugal}};
  EXPECT_EQ(FastestReliable(points), 16);
}

}  // namespace
}  // namespace sat::tune
