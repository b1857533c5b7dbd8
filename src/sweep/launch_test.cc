#include "sweep/launch.h"

#include <gtest/gtest.h>

namespace sat::sweep {
namespace {

TEST(Launch, EverySweepRunGetsAReportIntervalFittedToTheWindow) {
  Launch launch;
  launch.argv = {"python3", "train.py"};
  launch.env = {{"OMP_NUM_THREADS", "2"}};
  launch.window_s = 3;
  launch.time_limit_s = 60;
  const measure::InstrumentedLaunch l = LaunchSpec(launch);
  EXPECT_EQ(l.spec.argv, launch.argv);
  EXPECT_EQ(l.spec.env.at("OMP_NUM_THREADS"), "2");
  EXPECT_EQ(l.helper.report_interval_s, 0.25);  // 3 s / 6, capped
  EXPECT_FALSE(l.helper.auto_instrument.has_value());
  EXPECT_EQ(l.spec.time_limit_s, 60);
  EXPECT_FALSE(l.spec.on_line);
  launch.auto_instrumentation = false;
  launch.window_s = 0.12;
  const measure::InstrumentedLaunch off = LaunchSpec(launch);
  EXPECT_EQ(off.helper.auto_instrument, false);
  EXPECT_EQ(off.helper.report_interval_s, 0.05);  // at least 50 ms
}

TEST(Launch, MatchedLinesReachTheLoopOnce) {
  auto pattern = MetricPattern::Create(R"(loss=(?P<loss>[0-9.]+))", "'metric_pattern'");
  ASSERT_TRUE(pattern);
  Launch launch;
  launch.pattern = &*pattern;
  launch.lines = std::make_shared<MatchedLines>();
  const run::RunSpec rs = LaunchSpec(launch).spec;
  ASSERT_TRUE(rs.on_line);
  rs.on_line(run::Stream::kStdout, "step 1 loss=0.5");
  rs.on_line(run::Stream::kStderr, "no metric here");
  rs.on_line(run::Stream::kStderr, "loss=0.25");
  const std::vector<MetricPoint> points = launch.lines->Take();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].name, "loss");
  EXPECT_DOUBLE_EQ(points[0].value, 0.5);
  EXPECT_DOUBLE_EQ(points[1].value, 0.25);
  EXPECT_GT(points[1].time_unix, 1.7e9);
  EXPECT_TRUE(launch.lines->Take().empty());
}

}  // namespace
}  // namespace sat::sweep
