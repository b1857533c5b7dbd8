#include "measure/observation_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>

namespace sat::measure {
namespace {

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) + ".csv";
}

TEST(ObservationLog, RowsReadBackAsTheSameDoubles) {
  const std::string path = TempPath("obslog");
  {
    ObservationLog log(path);
    log.Append(0.1, {1234.000001, 0.1, 64, 7});
    log.Append(0.30000000000000004, {1234.1 + 1e-12, 1.0 / 3, 2.0 / 3, -1});
  }
  auto rows = ReadObservationLog(path);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].fed_s, 0.30000000000000004);
  EXPECT_EQ((*rows)[1].observation.t_end_s, 1234.1 + 1e-12);
  EXPECT_EQ((*rows)[1].observation.duration_s, 1.0 / 3);
  EXPECT_EQ((*rows)[1].observation.samples, 2.0 / 3);
  EXPECT_EQ((*rows)[1].observation.stream, -1);
  EXPECT_EQ((*rows)[0].observation.stream, 7);
}

TEST(ObservationLog, AFileThatCannotBeOpenedIsGivenUpQuietly) {
  ObservationLog log("/nonexistent-dir/estimator.csv");
  log.Append(0, {1, 1, 1, 0});  // no crash, no effect
  ObservationLog none("");
  none.Append(0, {1, 1, 1, 0});
}

TEST(ObservationLog, BadInputNamesTheFileAndTheLine) {
  EXPECT_NE(ReadObservationLog("/nonexistent.csv").error().message.find("/nonexistent.csv: cannot be read"),
            std::string::npos);
  const std::string path = TempPath("obslog-bad");
  std::ofstream(path) << "fed_s,t_end_s,duration_s,samples,stream\n0.1,1,0.1,64,0\n0.2,1.1,x,64,0\n";
  auto rows = ReadObservationLog(path);
  ASSERT_FALSE(rows);
  EXPECT_NE(rows.error().message.find("line 3 is not five numbers"), std::string::npos) << rows.error().message;
  std::ofstream(path) << "t,samples\n";
  EXPECT_NE(ReadObservationLog(path).error().message.find("line 1 is not the header"), std::string::npos);
}

// 100 samples/s with 3% noise, one report per 0.2 s, each fed 10 ms after it ends.
std::vector<FedObservation> Steady(double seconds) {
  std::mt19937 gen(3);
  std::normal_distribution<double> noise(0, 0.03);
  std::vector<FedObservation> log;
  for (double t = 0.2; t <= seconds + 1e-9; t += 0.2) {
    log.push_back({t + 0.01, {1000 + t, 0.2, 20 * (1 + noise(gen)), 0}});
  }
  return log;
}

TEST(ReplayEarlyStop, StopsWhereALiveLoopWouldAndAgreesWithTheEstimatorOnThePrefix) {
  const std::vector<FedObservation> log = Steady(120);
  const EarlyStop stop = ReplayEarlyStop(log, {}, 0);
  ASSERT_TRUE(stop.stopped);
  EXPECT_LT(stop.at_s, 60);
  EXPECT_NEAR(stop.estimate.samples_per_s, 100, 3);
  // The prefix fed by the stop, through a fresh estimator: the same estimate, converged; one check earlier, not.
  SteadyStateEstimator prefix, before;
  for (const FedObservation& f : log) {
    if (f.fed_s <= stop.at_s) prefix.Add(f.observation);
    if (f.fed_s <= stop.at_s - 0.1 - 1e-9) before.Add(f.observation);
  }
  EXPECT_EQ(prefix.size(), stop.observations);
  EXPECT_DOUBLE_EQ(prefix.Estimate().samples_per_s, stop.estimate.samples_per_s);
  EXPECT_TRUE(prefix.Converged());
  EXPECT_FALSE(before.Converged());
}

TEST(ReplayEarlyStop, SettleTimeAndAnUnreachableTargetHoldItOff) {
  const std::vector<FedObservation> log = Steady(120);
  EXPECT_GE(ReplayEarlyStop(log, {}, 90).at_s, 90);
  EstimatorOptions strict;
  strict.target_rel_half_width = 1e-6;
  const EarlyStop never = ReplayEarlyStop(log, strict, 0);
  EXPECT_FALSE(never.stopped);
  EXPECT_EQ(never.observations, log.size());
  EXPECT_NEAR(never.estimate.samples_per_s, 100, 1);
  EXPECT_FALSE(ReplayEarlyStop({}, {}, 0).stopped);
}

}  // namespace
}  // namespace sat::measure
