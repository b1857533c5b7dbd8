// saturate's packing policy, driven through Simulate on cases small enough to follow by hand.
#include "sim/measured_packing.h"

#include <gtest/gtest.h>

#include "sim/simulate.h"
#include "sim/test_runs.h"

namespace sat::sim {
namespace {

using testing::MakeRun;
using testing::OneNode;
using testing::Repeat;

PolicyResult Measured(const SimConfig& config, const std::vector<SimRun>& runs, const PolicyParams& params = {}) {
  Result<PolicyResult> r = Simulate(config, runs, Policy::kMeasured, params);
  EXPECT_TRUE(r) << r.error().message;
  return r.ok() ? *r : PolicyResult{};
}

TEST(MeasuredPacking, GrowsWhileTheProgressRateRisesThenHoldsTheDegree) {
  // Utilisation 0.4, 5% switch overhead. Rates: 1 run 1.0; 2 runs 2 x 0.95 = 1.9 (+90%);
  // 3 runs 3 x 0.95^2 / 1.2 = 2.256 (+19%); 4 runs 4 x 0.95^3 / 1.6 = 2.143 (-5%): the rate fell, so the
  // degree held is 3 and the fourth run is never replaced.
  PolicyResult r = Measured(OneNode(1), Repeat(MakeRun("a", 1000, 5, 0.4), 12));
  EXPECT_EQ(r.max_runs_on_a_gpu, 4);
  ASSERT_EQ(r.held_degree.count("a"), 1u);
  EXPECT_EQ(r.held_degree.at("a"), 3);
  EXPECT_EQ(r.runs_completed, 12);
  EXPECT_EQ(r.oom_events, 0);
}

TEST(MeasuredPacking, AGainUnderTheMinimumHoldsTheDegreeBelowIt) {
  // With min_gain 0.25 the third run's +19% is not a clear gain: {a, a, a} is poor and a holds degree 2.
  // The first three keep running together (each at 0.95^2 / 1.2) and end at once; the other nine then run
  // two by two (each at 0.95), the last one alone.
  PolicyParams params;
  params.min_gain = 0.25;
  PolicyResult r = Measured(OneNode(1), Repeat(MakeRun("a", 1000, 5, 0.4), 12), params);
  EXPECT_EQ(r.max_runs_on_a_gpu, 3);
  EXPECT_EQ(r.held_degree.at("a"), 2);
  EXPECT_NEAR(r.makespan_s, 1000 * 1.2 / (0.95 * 0.95) + 4 * 1000 / 0.95 + 1000, 1e-6);
}

TEST(MeasuredPacking, MemoryWithTheMarginBoundsTheDegree) {
  // 20 GiB runs: 3 x 20 x 1.1 = 66 fits 80 GiB, 4 x 20 x 1.1 = 88 does not.
  PolicyResult r = Measured(OneNode(1), Repeat(MakeRun("a", 1000, 20, 0.2), 8));
  EXPECT_EQ(r.max_runs_on_a_gpu, 3);
  EXPECT_TRUE(r.held_degree.empty());
  PolicyParams no_margin;
  no_margin.margin = 0;
  EXPECT_EQ(Measured(OneNode(1), Repeat(MakeRun("a", 1000, 20, 0.2), 8), no_margin).max_runs_on_a_gpu, 4);
}

TEST(MeasuredPacking, AnOomLowersTheGpusDegreeAndCostsOnlyTime) {
  // The runs show 30 GiB once warm but peak at 45 GiB: (30 + 30) x 1.1 fits, 45 + 45 does not. The second
  // run fails at time 0, the GPU's degree drops to 1, and it runs after the first: once, no more OOMs.
  SimRun run = MakeRun("a", 1000, 30, 0.3);
  run.peak_gib = 45;
  PolicyResult r = Measured(OneNode(1), Repeat(run, 2));
  EXPECT_EQ(r.oom_events, 1);
  EXPECT_EQ(r.runs_completed, 2);
  EXPECT_DOUBLE_EQ(r.makespan_s, 2000);
}

TEST(MeasuredPacking, ARunOfAnUnmeasuredShapeIsNotOvertaken) {
  // Submission order A (shape a), B (shape b), C (shape a); warm-up 100 s. C fits beside A once A is measured,
  // but B, never measured, is first in line: growth waits until A ends (1000 s) and B starts alone. B is
  // measured at 1100 s and C joins it; B's last 900 s at 0.95 end at 1100 + 900/0.95, then C's last 100 s.
  std::vector<SimRun> runs = {MakeRun("a", 1000, 10, 0.4), MakeRun("b", 1000, 10, 0.4), MakeRun("a", 1000, 10, 0.4)};
  for (SimRun& r : runs) r.warmup_s = 100;
  PolicyResult r = Measured(OneNode(1), runs);
  EXPECT_NEAR(r.makespan_s, 1100 + 900 / 0.95 + 100, 1e-6);
}

TEST(MeasuredPacking, ARunThatEndsBeforeItsWarmupStillTeachesItsShape) {
  // Warm-up 100 s. A1 (shape a, 50 s) ends unmeasured at 50 s but its footprint was seen: A2 takes its GPU,
  // and A3 (shape a) may join B on the other GPU as soon as B is measured at 100 s, without waiting for A2.
  std::vector<SimRun> runs = {MakeRun("a", 50, 10, 0.4), MakeRun("b", 1000, 10, 0.4), MakeRun("a", 1000, 10, 0.4),
                              MakeRun("a", 1000, 10, 0.4)};
  for (SimRun& r : runs) r.warmup_s = 100;
  PolicyResult r = Measured(OneNode(2), runs);
  EXPECT_NEAR(r.makespan_s, 100 + 900 / 0.95 + 100, 1e-6);
}

TEST(MeasuredPacking, ARunThatDoesNotFitLetsLaterOnesThatDoGoFirst) {
  // Two GPUs; S1 (10 GiB) and A (65 GiB) start alone and are measured at once. B (65 GiB) fits beside
  // neither ((10 + 65) x 1.1 > 80), so S2 (10 GiB) goes first, beside S1. They share at 0.95 and end at
  // 500/0.95; B then starts on the emptied GPU and ends 1000 s later.
  std::vector<SimRun> runs = {MakeRun("small", 500, 10, 0.3), MakeRun("big", 1000, 65, 0.3),
                              MakeRun("big", 1000, 65, 0.3), MakeRun("small", 500, 10, 0.3)};
  PolicyResult r = Measured(OneNode(2), runs);
  EXPECT_EQ(r.max_runs_on_a_gpu, 2);
  EXPECT_NEAR(r.makespan_s, 500 / 0.95 + 1000, 1e-6);
  EXPECT_EQ(r.oom_events, 0);
}

TEST(MeasuredPacking, AShapesHeldDegreeBoundsOnlyGpusOfThatShapeAlone) {
  // L (utilisation 1.0) pairs badly: each of two runs at 0.95/2, a rate of 0.95 < 1, so L holds degree 1;
  // L1 and L2 end together at 2000/0.95. S1 then starts alone, and L3 may still join it: a mixed GPU is not
  // bound by L's degree. Utilisations 1.0 + 0.2 share at 0.95/1.2 each: both take 1200/0.95 more.
  std::vector<SimRun> runs = {MakeRun("L", 1000, 10, 1.0), MakeRun("L", 1000, 10, 1.0), MakeRun("S", 1000, 10, 0.2),
                              MakeRun("L", 1000, 10, 1.0)};
  PolicyResult r = Measured(OneNode(1), runs);
  EXPECT_EQ(r.held_degree.at("L"), 1);
  EXPECT_NEAR(r.makespan_s, 2000 / 0.95 + 1200 / 0.95, 1e-6);
}

TEST(MeasuredPacking, MixedGpusHoldTheirDegreeWithoutTeachingEitherShape) {
  // Two shapes on one GPU at full utilisation: 2 x 0.95 / 2.0 = 0.95 < 1, the rate fell, so that GPU holds
  // one run; no shape learns a degree from a mixed GPU.
  std::vector<SimRun> runs = {MakeRun("a", 1000, 10, 1.0), MakeRun("b", 1000, 10, 1.0), MakeRun("a", 1000, 10, 1.0),
                              MakeRun("b", 1000, 10, 1.0)};
  PolicyResult r = Measured(OneNode(1), runs);
  EXPECT_TRUE(r.held_degree.empty());
  EXPECT_EQ(r.max_runs_on_a_gpu, 2);
  EXPECT_EQ(r.runs_completed, 4);
}

}  // namespace
}  // namespace sat::sim
