#include "measure/progress.h"

#include <gtest/gtest.h>

namespace sat::measure {
namespace {

HelperMessage Report(int64_t pid, double t, int64_t steps, double samples, double wait_s = 0, double step_s = 0) {
  HelperMessage m;
  m.type = MessageType::kProgress;
  m.run = "run-1";
  m.pid = pid;
  m.t = t;
  m.steps = steps;
  m.samples = samples;
  m.wait_s = wait_s;
  m.step_s = step_s;
  return m;
}

void ExpectObservation(const std::optional<Observation>& o, double t, double duration, double samples, int64_t stream) {
  ASSERT_TRUE(o.has_value());
  EXPECT_DOUBLE_EQ(o->t_end_s, t);
  EXPECT_NEAR(o->duration_s, duration, 1e-12);
  EXPECT_DOUBLE_EQ(o->samples, samples);
  EXPECT_EQ(o->stream, stream);
}

TEST(ProgressAggregator, DiffsOfCumulativeCountersPerProcess) {
  ProgressAggregator agg("run-1");
  EXPECT_FALSE(agg.Add(Report(10, 1.0, 2, 64)).has_value());  // baseline
  EXPECT_FALSE(agg.Add(Report(11, 1.05, 1, 32)).has_value());
  ExpectObservation(agg.Add(Report(10, 1.1, 5, 160)), 1.1, 0.1, 96, 10);
  ExpectObservation(agg.Add(Report(11, 1.25, 4, 128)), 1.25, 0.2, 96, 11);
  EXPECT_EQ(agg.totals().steps, 9);
  EXPECT_DOUBLE_EQ(agg.totals().samples, 288);
  EXPECT_EQ(agg.totals().processes, 2);
}

TEST(ProgressAggregator, CounterResetStartsANewBaselineAndKeepsTotals) {
  ProgressAggregator agg("run-1");
  agg.Add(Report(10, 1.0, 10, 320, 1.0, 3.0));
  ExpectObservation(agg.Add(Report(10, 2.0, 20, 640, 2.0, 6.0)), 2.0, 1.0, 320, 10);
  EXPECT_FALSE(agg.Add(Report(10, 3.0, 3, 96, 0.5, 1.0)).has_value());
  EXPECT_EQ(agg.resets(), 1u);
  ExpectObservation(agg.Add(Report(10, 3.5, 5, 160, 0.75, 1.5)), 3.5, 0.5, 64, 10);
  EXPECT_EQ(agg.totals().steps, 25);
  EXPECT_DOUBLE_EQ(agg.totals().samples, 800);
  EXPECT_DOUBLE_EQ(agg.totals().wait_s, 2.75);
  EXPECT_DOUBLE_EQ(agg.totals().step_s, 7.5);
}

// A report of the automatic layer: `excluded` seconds spent in other loaders so far.
HelperMessage AutoReport(int64_t pid, double t, int64_t steps, double samples, double excluded) {
  HelperMessage m = Report(pid, t, steps, samples);
  m.excluded_s = excluded;
  return m;
}

TEST(ProgressAggregator, TimeInOtherLoadersIsNotTrainingTime) {
  ProgressAggregator agg("run-1");
  agg.Add(AutoReport(10, 1.0, 10, 320, 0));
  ExpectObservation(agg.Add(AutoReport(10, 2.0, 20, 640, 0)), 2.0, 1.0, 320, 10);
  // Ten steps and a 4 s validation pass between them: the steps took 1 s, as before.
  ExpectObservation(agg.Add(AutoReport(10, 7.0, 30, 960, 4.0)), 7.0, 1.0, 320, 10);
  ExpectObservation(agg.Add(AutoReport(10, 8.0, 40, 1280, 4.0)), 8.0, 1.0, 320, 10);
  EXPECT_DOUBLE_EQ(agg.totals().excluded_s, 4.0);
  EXPECT_EQ(agg.resets(), 0u);
}

TEST(ProgressAggregator, ExcludedTimeNeverLeavesLessThanAFloor) {
  ProgressAggregator agg("run-1");
  agg.Add(AutoReport(10, 1.0, 10, 320, 0));
  // More excluded time than elapsed time (clock skew between the helper's timers): a small positive duration.
  std::optional<Observation> o = agg.Add(AutoReport(10, 2.0, 11, 352, 1.5));
  ASSERT_TRUE(o.has_value());
  EXPECT_DOUBLE_EQ(o->duration_s, ProgressAggregator::kMinObservationS);
  EXPECT_DOUBLE_EQ(o->samples, 32);
  // Exactly all of it excluded: the same floor, never zero.
  o = agg.Add(AutoReport(10, 3.0, 11, 352, 2.5));
  ASSERT_TRUE(o.has_value());
  EXPECT_DOUBLE_EQ(o->duration_s, ProgressAggregator::kMinObservationS);
  // Reports closer together than the floor keep their own (smaller) interval.
  o = agg.Add(AutoReport(10, 3.0005, 12, 384, 2.6));
  ASSERT_TRUE(o.has_value());
  EXPECT_NEAR(o->duration_s, 0.0005, 1e-12);
  EXPECT_GT(o->duration_s, 0);
}

TEST(ProgressAggregator, ExcludedTimeAcrossACounterReset) {
  ProgressAggregator agg("run-1");
  agg.Add(AutoReport(10, 1.0, 10, 320, 2.0));
  ExpectObservation(agg.Add(AutoReport(10, 4.0, 20, 640, 4.0)), 4.0, 1.0, 320, 10);
  // The helper started counting again: a new baseline, the earlier counts kept.
  EXPECT_FALSE(agg.Add(AutoReport(10, 5.0, 2, 64, 0.5)).has_value());
  EXPECT_EQ(agg.resets(), 1u);
  ExpectObservation(agg.Add(AutoReport(10, 6.0, 4, 128, 0.75)), 6.0, 0.75, 64, 10);
  EXPECT_DOUBLE_EQ(agg.totals().excluded_s, 4.75);
  EXPECT_EQ(agg.totals().steps, 24);
  // Only the excluded time going back is a restart too: it is cumulative like the rest.
  EXPECT_FALSE(agg.Add(AutoReport(10, 7.0, 6, 192, 0.25)).has_value());
  EXPECT_EQ(agg.resets(), 2u);
}

TEST(ProgressAggregator, ReportsWithoutExcludedTimeAreUnchanged) {
  ProgressAggregator agg("run-1");
  agg.Add(Report(10, 1.0, 10, 320));
  ExpectObservation(agg.Add(Report(10, 3.0, 20, 640)), 3.0, 2.0, 320, 10);
  EXPECT_DOUBLE_EQ(agg.totals().excluded_s, 0);
}

TEST(ProgressAggregator, StaleAndForeignMessagesYieldNothing) {
  ProgressAggregator agg("run-1");
  agg.Add(Report(10, 2.0, 10, 320));
  EXPECT_FALSE(agg.Add(Report(10, 2.0, 10, 320)).has_value());  // no time passed
  HelperMessage other = Report(10, 3.0, 20, 640);
  other.run = "run-2";
  EXPECT_FALSE(agg.Add(other).has_value());
  HelperMessage knob = Report(10, 3.0, 20, 640);
  knob.type = MessageType::kKnob;
  EXPECT_FALSE(agg.Add(knob).has_value());
  EXPECT_EQ(agg.totals().steps, 10);
  EXPECT_EQ(agg.resets(), 0u);
}

TEST(ProgressAggregator, BreakdownSharesAndMemoryPeak) {
  ProgressAggregator agg("run-1");
  HelperMessage a = Report(10, 1.0, 10, 320, 1.0, 3.0);
  a.phases = {{"metrics", 0.5}};
  a.mem_peak_bytes = 1000;
  a.mem_reserved_bytes = 2000;
  HelperMessage b = Report(11, 1.0, 10, 320, 1.0, 5.0);
  b.phases = {{"metrics", 1.5}, {"log", 1.0}};
  b.mem_peak_bytes = 1500;
  agg.Add(a);
  agg.Add(b);
  a.t = 2.0;
  a.mem_peak_bytes = 1200;
  a.mem_reserved_bytes = std::nullopt;
  agg.Add(a);

  const ProgressTotals& t = agg.totals();
  EXPECT_DOUBLE_EQ(t.WaitShare(), 0.2);
  const std::map<std::string, double> phases = t.PhaseShares();
  EXPECT_DOUBLE_EQ(phases.at("metrics"), 0.2);
  EXPECT_DOUBLE_EQ(phases.at("log"), 0.1);
  EXPECT_EQ(t.mem_peak_bytes, 1500);
  EXPECT_EQ(t.mem_reserved_bytes, 2000);
}

TEST(ProgressAggregator, DoneCountsProcesses) {
  ProgressAggregator agg("run-1");
  agg.Add(Report(10, 1.0, 1, 32));
  agg.Add(Report(11, 1.0, 1, 32));
  HelperMessage done = Report(10, 2.0, 4, 128);
  done.type = MessageType::kDone;
  done.done_reason = "exhausted";
  ExpectObservation(agg.Add(done), 2.0, 1.0, 96, 10);
  EXPECT_EQ(agg.totals().processes, 2);
  EXPECT_EQ(agg.totals().processes_done, 1);
  EXPECT_EQ(agg.totals().done_reason, "exhausted");
}

TEST(ProgressAggregator, NoLoopTimeMeansZeroShares) {
  ProgressTotals t;
  EXPECT_EQ(t.WaitShare(), 0);
}

TEST(ProgressAggregator, FeedsTheEstimator) {
  ProgressAggregator agg("run-1");
  SteadyStateEstimator est;
  for (int i = 0; i <= 100; ++i) {
    for (int64_t pid : {10, 11}) {
      if (auto o = agg.Add(Report(pid, 0.1 * i + 0.01 * static_cast<double>(pid - 10), 4 * i, 128.0 * i))) {
        est.Add(*o);
      }
    }
  }
  EXPECT_NEAR(est.Estimate().samples_per_s, 2560, 1e-6);
}

}  // namespace
}  // namespace sat::measure

namespace sat::measure {
namespace {

TEST(ProgressAggregator, EachRankKeepsItsOwnTotalsAndRate) {
  ProgressAggregator agg("run-1");
  for (int64_t pid : {20, 21}) {
    HelperMessage first = Report(pid, 1.0, 2, 64, 0.1, 0.2);
    first.rank = pid - 20;
    first.before_backward_s = 0.05;
    agg.Add(first);
  }
  HelperMessage r0 = Report(20, 3.0, 12, 384, 0.2, 1.8);
  r0.rank = 0;
  r0.before_backward_s = 0.5;
  r0.phases["after_step"] = 0.1;
  r0.excluded_s = 0.5;  // a validation pass: left out of its rate
  agg.Add(r0);
  HelperMessage r1 = Report(21, 3.0, 12, 384, 1.5, 0.5);
  r1.rank = 1;
  agg.Add(r1);  // this report has no before_backward_s: the earlier one still says it reports it
  const std::vector<ProcessTotals>& p = agg.totals().per_process;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].pid, 20);
  EXPECT_EQ(p[0].rank, 0);
  EXPECT_EQ(p[0].steps, 12);
  EXPECT_DOUBLE_EQ(p[0].samples_per_s, 320 / 1.5);
  EXPECT_DOUBLE_EQ(p[0].after_step_s, 0.1);
  EXPECT_EQ(p[0].before_backward_s, 0.5);
  EXPECT_EQ(p[1].rank, 1);
  EXPECT_DOUBLE_EQ(p[1].samples_per_s, 320 / 2.0);
  EXPECT_DOUBLE_EQ(p[1].wait_s, 1.5);
  EXPECT_EQ(p[1].before_backward_s, 0.0);
}

TEST(ProgressAggregator, ProcessesWithoutStepsAreNotListed) {
  ProgressAggregator agg("run-1");
  agg.Add(Report(30, 1.0, 0, 0));
  agg.Add(Report(30, 2.0, 0, 0));
  EXPECT_TRUE(agg.totals().per_process.empty());
  EXPECT_EQ(agg.totals().processes, 1);
}

}  // namespace
}  // namespace sat::measure
