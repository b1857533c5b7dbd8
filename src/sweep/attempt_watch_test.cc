#include "sweep/attempt_watch.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "telemetry/sampler.h"

namespace sat::sweep {
namespace {

measure::HelperMessage Parse(const nlohmann::json& j) {
  auto m = measure::ParseHelperMessage(j.dump());
  EXPECT_TRUE(m) << m.error().message;
  return m.ok() ? *m : measure::HelperMessage{};
}

measure::HelperMessage Progress(const char* run, double t, int64_t steps) {
  return Parse({{"v", 1}, {"type", "progress"}, {"run", run}, {"pid", 7}, {"t", t}, {"steps", steps},
                {"samples", steps * 16.0}, {"wait_s", 0.0}, {"step_s", 0.0}});
}

measure::HelperMessage Metrics(const char* run, double t) {
  return Parse({{"v", 1}, {"type", "metrics"}, {"run", run}, {"pid", 7}, {"t", t}, {"metrics", {{"loss", 0.5}}}});
}

TEST(AttemptWatch, TakesItsOwnRunsMessagesOnly) {
  AttemptWatch w("7-r0-1", 100, false, MeterOptions{}, true);
  EXPECT_TRUE(w.OnMessage(Progress("7-r1-1", 101, 5)).empty());
  EXPECT_TRUE(w.OnMessage(Metrics("7-r1-1", 101)).empty());
  EXPECT_FALSE(w.meter().stepping()) << "another run's report";
  EXPECT_TRUE(w.OnMessage(Progress("7-r0-1", 101, 5)).empty());
  EXPECT_TRUE(w.meter().stepping());
  std::vector<MetricPoint> points = w.OnMessage(Metrics("7-r0-1", 102));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].name, "loss");
  EXPECT_DOUBLE_EQ(points[0].value, 0.5);
}

// Tree readings of a real command, which has not loaded torch: nothing is announced until the run says it has
// (a hello naming a torch version, as the helper sends once torch is imported).
TEST(AttemptWatch, ReadsTheTreeAndAnnouncesOnlyATorchRun) {
  AttemptWatch w("7-r0-1", telemetry::MonotonicSeconds(), false, MeterOptions{}, true);
  Launch launch;
  launch.argv = {"sleep", "5"};
  auto run = w.Start(launch);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ((*run)->run_id(), "7-r0-1");
  telemetry::Sample sample;
  w.ReadTree(**run, sample, telemetry::MonotonicSeconds());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  telemetry::ProcTreeSample tree = w.ReadTree(**run, sample, telemetry::MonotonicSeconds());
  EXPECT_FALSE(tree.pids.empty());
  EXPECT_TRUE(tree.rss_bytes.has_value());
  EXPECT_FALSE(w.meter().announced());
  EXPECT_EQ((*run)->signs().torch_loaded, false) << "sleep's memory map has no torch";

  EXPECT_TRUE((*run)->Accept(Parse({{"v", 1}, {"type", "hello"}, {"run", "7-r0-1"}, {"pid", 7}, {"t", 1.0},
                                    {"mode", "train"}, {"torch", "2.1.0"}})));
  w.ReadTree(**run, sample, telemetry::MonotonicSeconds());
  EXPECT_TRUE(w.meter().announced());
  (*run)->process().RequestStop();
}

// The watch starts the command with its own matched lines: what the pattern finds in the output reaches TakeLines.
TEST(AttemptWatch, StartsTheCommandWithItsMatchedLines) {
  auto pattern = MetricPattern::Create(R"(acc=(?P<acc>[0-9.]+))", "'metric_pattern'");
  ASSERT_TRUE(pattern);
  AttemptWatch w("7-r0-2", telemetry::MonotonicSeconds(), false, MeterOptions{}, false);
  Launch launch;
  launch.argv = {"sh", "-c", "echo 'epoch 1 acc=0.75'; echo done"};
  launch.pattern = &*pattern;
  auto run = w.Start(launch);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ((*run)->process().Wait().exit_class, run::ExitClass::kFinished);
  const std::vector<MetricPoint> points = w.TakeLines();
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].name, "acc");
  EXPECT_DOUBLE_EQ(points[0].value, 0.75);
}

TEST(AttemptWatch, MatchedLinesAreTakenOnce) {
  AttemptWatch w("7-r0-1", 0, false, MeterOptions{}, false);
  w.lines()->Push(MetricPoint{"acc", 0.9, std::nullopt, 1000});
  ASSERT_EQ(w.TakeLines().size(), 1u);
  EXPECT_TRUE(w.TakeLines().empty());
}

}  // namespace
}  // namespace sat::sweep
