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

// A tree reading of a real process: this test's own, which has not loaded torch, so nothing is announced.
TEST(AttemptWatch, ReadsTheTreeAndAnnouncesOnlyATorchRun) {
  AttemptWatch w("7-r0-1", telemetry::MonotonicSeconds(), false, MeterOptions{}, true);
  telemetry::Sample sample;
  w.ReadTree(getpid(), sample, telemetry::MonotonicSeconds());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  telemetry::ProcTreeSample tree = w.ReadTree(getpid(), sample, telemetry::MonotonicSeconds());
  EXPECT_FALSE(tree.pids.empty());
  EXPECT_TRUE(tree.rss_bytes.has_value());
  EXPECT_FALSE(w.meter().announced());
}

TEST(AttemptWatch, MatchedLinesAreTakenOnce) {
  AttemptWatch w("7-r0-1", 0, false, MeterOptions{}, false);
  w.lines()->Push({{"acc", 0.9}}, 1000);
  ASSERT_EQ(w.TakeLines().size(), 1u);
  EXPECT_TRUE(w.TakeLines().empty());
}

}  // namespace
}  // namespace sat::sweep
