#include "live/live_figures.h"

#include <gtest/gtest.h>

#include <thread>

namespace sat::live {
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
  telemetry::Sample s;
  figures.SetSample(s);
  s.host.cpu_count = 64;
  figures.SetSample(s);
  figures.SetTreeCommand("python3 train.py");
  Figures in = figures.Snapshot(0);
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
  Figures in = figures.Snapshot(101.5);
  ASSERT_EQ(in.runs.size(), 1u);
  EXPECT_EQ(in.runs[0].labels, full);
  EXPECT_DOUBLE_EQ(*in.runs[0].samples_per_s, 250);
  EXPECT_DOUBLE_EQ(*figures.Snapshot(110).runs[0].samples_per_s, 0);
  figures.EndRun("full");
  EXPECT_TRUE(figures.Snapshot(110).runs.empty());
}

TEST(LiveFigures, SetRunsReplacesTheSourcesEarlierRuns) {
  LiveFigures figures;
  figures.SetRuns("sweep", {{{{"run", "a"}}, 10.0}, {{{"run", "b"}}, std::nullopt}}, 0);
  figures.SetRuns("sweep", {{{{"run", "b"}}, 12.0}}, 1);
  Figures in = figures.Snapshot(0);
  ASSERT_EQ(in.runs.size(), 1u);
  EXPECT_EQ(in.runs[0].labels, (Labels{{"run", "b"}}));
  EXPECT_EQ(in.runs[0].samples_per_s, 12.0);
}

// The history a dashboard draws: at most a point a second per run, runs in the order they first reported, kept
// after a run ends until it ages out.
TEST(LiveFigures, HistoryKeepsAPointASecondForTenMinutes) {
  LiveFigures figures;
  const Labels full = {{"stage", "full"}};
  for (int i = 0; i <= 40; ++i) figures.ObserveRun("full", full, Progress(100 + 0.25 * i, 0.25, 25));  // 100/s
  figures.SetRuns("sweep", {{{{"run", "a"}}, 7.0}}, 105);
  figures.SetRuns("sweep", {{{{"run", "a"}}, 9.0}}, 105.5);  // under a second after the last point: not kept
  figures.SetRuns("sweep", {{{{"run", "a"}}, 8.0}}, 106);
  figures.EndRun("full");
  std::vector<RunHistory> h = figures.History(110);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].labels, full);
  ASSERT_EQ(h[0].points.size(), 11u) << "10 s of reports, one point a second";
  EXPECT_DOUBLE_EQ(h[0].points.front().first, 100);
  EXPECT_DOUBLE_EQ(h[0].points.back().second, 100);
  EXPECT_EQ(h[1].labels, (Labels{{"run", "a"}}));
  EXPECT_EQ(h[1].points, (std::vector<std::pair<double, double>>{{105, 7.0}, {106, 8.0}}));
  EXPECT_TRUE(figures.History(99).empty()) << "nothing yet";
  // Ten minutes on, a new report ages out what is older: the sweep's run whole, the first points of the ended one.
  figures.ObserveRun("next", {{"stage", "next"}}, Progress(706.5, 0.25, 25));
  h = figures.History(707);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].labels, full);
  EXPECT_EQ(h[0].points.size(), 4u) << "107 to 110";
  EXPECT_EQ(h[1].labels, (Labels{{"stage", "next"}}));
}

// Publishers and the server's snapshots run on different threads.
TEST(LiveFigures, PublishingAndSnapshotsFromSeveralThreads) {
  LiveFigures figures;
  std::thread publisher([&] {
    for (int i = 0; i < 2000; ++i) {
      figures.ObserveRun("run", {{"stage", "full"}}, Progress(i * 0.01, 0.01, 1));
      figures.SetSample(telemetry::Sample{});
    }
  });
  size_t seen = 0;
  for (int i = 0; i < 2000; ++i) seen += figures.Snapshot(i * 0.01).runs.size();
  publisher.join();
  EXPECT_NEAR(*figures.Snapshot(19.995).runs.at(0).samples_per_s, 100, 1e-6);
  EXPECT_LE(seen, 2000u);
}

}  // namespace
}  // namespace sat::live
