#include "monitor/live_figures.h"

#include <gtest/gtest.h>

#include <thread>

#include "monitor/test_samples.h"

namespace sat::monitor {
namespace {

measure::Observation Progress(double t_end_s, double duration_s, double samples, int64_t stream = 1) {
  return {.t_end_s = t_end_s, .duration_s = duration_s, .samples = samples, .stream = stream};
}

TEST(WindowRate, SamplesOverTrainingSecondsPerProcessAdded) {
  std::deque<measure::Observation> recent = {Progress(10, 0.5, 50), Progress(10.5, 0.5, 60),
                                              Progress(10.4, 1.0, 30, 2)};
  // Process 1: 110 samples in 1 s; process 2: 30 in 1 s.
  EXPECT_DOUBLE_EQ(WindowRate(recent, 11, 5), 140);
}

TEST(WindowRate, OnlyProgressEndingInTheWindowCounts) {
  std::deque<measure::Observation> recent = {Progress(1, 1, 1000), Progress(9, 1, 100)};
  EXPECT_DOUBLE_EQ(WindowRate(recent, 10, 5), 100);
  EXPECT_DOUBLE_EQ(WindowRate(recent, 20, 5), 0) << "a run that stopped reporting reads 0";
  EXPECT_DOUBLE_EQ(WindowRate({}, 20, 5), 0);
}

TEST(LiveFigures, SnapshotCarriesTheLatestSampleAndHostname) {
  LiveFigures figures("node7");
  EXPECT_FALSE(figures.Snapshot(0).sample);
  telemetry::Sample s = testing::IdleSample();
  figures.SetSample(s);
  s.host.cpu_count = 64;
  figures.SetSample(s);
  figures.SetTreeCommand("python3 train.py");
  ExpositionInput in = figures.Snapshot(0);
  ASSERT_TRUE(in.sample);
  EXPECT_EQ(in.sample->host.cpu_count, 64u);
  EXPECT_EQ(in.hostname, "node7");
  EXPECT_EQ(in.tree_command, "python3 train.py");
}

TEST(LiveFigures, ObservedRunsHaveTheirWindowRateUntilTheyEnd) {
  LiveFigures figures;
  const Labels full = {{"command", "probe"}, {"stage", "full"}};
  figures.ObserveRun("full", full, Progress(100, 1, 200));
  figures.ObserveRun("full", {{"ignored", "later labels"}}, Progress(101, 1, 300));
  ExpositionInput in = figures.Snapshot(101.5);
  ASSERT_EQ(in.runs.size(), 1u);
  EXPECT_EQ(in.runs[0].labels, full);
  EXPECT_DOUBLE_EQ(*in.runs[0].samples_per_s, 250);
  EXPECT_DOUBLE_EQ(*figures.Snapshot(110).runs[0].samples_per_s, 0);
  figures.EndRun("full");
  EXPECT_TRUE(figures.Snapshot(110).runs.empty());
}

TEST(LiveFigures, SetRunsReplacesTheSourcesEarlierRuns) {
  LiveFigures figures;
  figures.SetRuns("sweep", {{{{"run", "a"}}, 10.0}, {{{"run", "b"}}, std::nullopt}});
  figures.SetRuns("sweep", {{{{"run", "b"}}, 12.0}});
  ExpositionInput in = figures.Snapshot(0);
  ASSERT_EQ(in.runs.size(), 1u);
  EXPECT_EQ(in.runs[0].labels, (Labels{{"run", "b"}}));
  EXPECT_EQ(in.runs[0].samples_per_s, 12.0);
}

// Publishers and the server's snapshots run on different threads.
TEST(LiveFigures, PublishingAndSnapshotsFromSeveralThreads) {
  LiveFigures figures;
  std::thread publisher([&] {
    for (int i = 0; i < 2000; ++i) {
      figures.ObserveRun("run", {{"stage", "full"}}, Progress(i * 0.01, 0.01, 1));
      figures.SetSample(testing::IdleSample());
    }
  });
  size_t seen = 0;
  for (int i = 0; i < 2000; ++i) seen += figures.Snapshot(i * 0.01).runs.size();
  publisher.join();
  EXPECT_NEAR(*figures.Snapshot(19.995).runs.at(0).samples_per_s, 100, 1e-6);
  EXPECT_LE(seen, 2000u);
}

}  // namespace
}  // namespace sat::monitor
