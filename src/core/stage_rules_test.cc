// The rules of a stage (MeasureStage) on a scripted command (test_scripted_command.h): when it stops, what counts
// in its estimate, and what it keeps of the helper's messages. Each runs in milliseconds; the same rules on real
// scripts are checked end to end by tests/e2e/probe_*.sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "core/stage.h"
#include "core/test_scripted_command.h"

namespace sat::core {
namespace {

using fixtures::ScriptedCommand;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr double kT0 = 1000;

StageOptions Options(double budget_s) {
  StageOptions o;
  o.budget_s = budget_s;
  return o;
}

StageResult Measure(ScriptedCommand& c, const StageOptions& o, StageKind kind = StageKind::kFull) {
  return MeasureStage(kind, o, c, "run", kT0);
}

measure::HelperMessage Typed(measure::MessageType type, int64_t pid = 100) {
  measure::HelperMessage m;
  m.type = type;
  m.run = "run";
  m.pid = pid;
  return m;
}

measure::HelperMessage LoaderOf(int64_t rank, int64_t world, int64_t batch) {
  measure::HelperMessage m = Typed(measure::MessageType::kLoader, 100 + rank);
  m.rank_info = measure::RankInfo{rank, world, rank};
  m.loader.key = "train.py:57#0";
  m.loader.batch_size = batch;
  return m;
}

// Progress reports every 0.1 s from 0 to `to_s`, one step each; `samples_after(t)` is the number of samples
// between the report at `t` and the next.
void Reports(ScriptedCommand& c, double to_s, const std::function<double(double)>& samples_after) {
  double samples = 0;
  int64_t steps = 0;
  for (double t = 0; t <= to_s; t += 0.1) {
    measure::HelperMessage m = Typed(measure::MessageType::kProgress);
    m.samples = samples;
    m.steps = steps++;
    c.Message(t, m);
    samples += samples_after(t);
  }
}

// A stream whose rate climbs 2% a second and never settles.
void Climbing(ScriptedCommand& c, double to_s) {
  Reports(c, to_s, [](double t) { return 0.1 * 1000 * (1 + 0.02 * t); });
}

TEST(StageRules, StopsOnceTheEstimateIsTightLongBeforeTheBudget) {
  ScriptedCommand c(kT0);
  c.Steady(0, 120, 0.1, 1000);
  StageResult r = Measure(c, Options(40));
  ASSERT_TRUE(c.stopped_at());
  EXPECT_LT(*c.stopped_at() - kT0, 20);
  EXPECT_TRUE(r.estimate.converged);
  EXPECT_NEAR(r.estimate.samples_per_s, 1000, 10);
  EXPECT_EQ(r.outcome.exit_class, run::ExitClass::kStopped);
  EXPECT_TRUE(r.ran);
  EXPECT_TRUE(r.helper_seen);
  EXPECT_FALSE(r.series.empty());
}

TEST(StageRules, ARateThatKeepsMovingRunsToTheBudget) {
  ScriptedCommand c(kT0);
  Climbing(c, 60);
  StageResult r = Measure(c, Options(20));
  ASSERT_TRUE(c.stopped_at());
  EXPECT_NEAR(*c.stopped_at() - kT0, 20, 0.2);
  EXPECT_FALSE(r.estimate.converged);
  EXPECT_NEAR(r.wall_s, 20, 0.3);
}

// A stream around `rate` samples/s whose 0.1-s reports scatter by up to ±60% (a fixed pseudo-random sequence): its
// interval narrows to about ±4% within seconds, and only after minutes to the ±2% target.
void Scattered(ScriptedCommand& c, double to_s, double rate) {
  uint32_t x = 12345;
  Reports(c, to_s, [&](double) {
    x = x * 1664525u + 1013904223u;
    return 0.1 * rate * (0.4 + 1.2 * (x >> 8) / double(1u << 24));
  });
}

StageOptions StopAbove(double budget_s, double rate) {
  StageOptions o = Options(budget_s);
  o.stop_above = StageOptions::StopAbove{rate, 0.1};
  return o;
}

TEST(StageRules, AScatteredRateRunsToTheBudgetWithoutConverging) {
  ScriptedCommand c(kT0);
  Scattered(c, 60, 1000);
  StageResult r = Measure(c, Options(30));
  ASSERT_TRUE(c.stopped_at());
  EXPECT_NEAR(*c.stopped_at() - kT0, 30, 0.2);
  EXPECT_FALSE(r.estimate.converged);
  EXPECT_GT(r.estimate.rel_half_width, 0.02);
  EXPECT_LT(r.estimate.rel_half_width, 0.1);
  EXPECT_FALSE(r.stopped_above);
}

TEST(StageRules, ARateClearlyAboveStopAboveStopsOnceItsSteadyPartIsLongEnough) {
  ScriptedCommand c(kT0);
  Scattered(c, 60, 1000);
  StageResult r = Measure(c, StopAbove(30, 500));
  ASSERT_TRUE(c.stopped_at());
  EXPECT_LT(*c.stopped_at() - kT0, 10) << "3 s steady after the warm-up, not the 30-s budget";
  ASSERT_TRUE(r.stopped_above);
  EXPECT_DOUBLE_EQ(*r.stopped_above, 500);
  EXPECT_FALSE(r.estimate.converged);
  EXPECT_TRUE(r.estimate.enough);
  EXPECT_GE(r.estimate.ci_low, 500);
  EXPECT_LE(r.estimate.rel_half_width, 0.1);
  EXPECT_NEAR(r.estimate.samples_per_s, 1000, 100);
}

TEST(StageRules, StopAboveWaitsWhileTheIntervalReachesBelowTheRate) {
  // Above the rate itself, never: the stage runs to its budget.
  ScriptedCommand above(kT0);
  Scattered(above, 60, 1000);
  StageResult r = Measure(above, StopAbove(30, 2000));
  ASSERT_TRUE(above.stopped_at());
  EXPECT_NEAR(*above.stopped_at() - kT0, 30, 0.2);
  EXPECT_FALSE(r.stopped_above);
  // Close below it, only once the interval's low end has cleared it: later than far below it.
  ScriptedCommand far(kT0), close(kT0);
  Scattered(far, 60, 1000);
  Scattered(close, 60, 1000);
  StageResult far_r = Measure(far, StopAbove(30, 500));
  StageResult close_r = Measure(close, StopAbove(30, 930));
  ASSERT_TRUE(far.stopped_at() && close.stopped_at() && far_r.stopped_above);
  EXPECT_GT(*close.stopped_at(), *far.stopped_at());
  if (close_r.stopped_above) {
    EXPECT_GE(close_r.estimate.ci_low, 930);
  }
  EXPECT_LT(far_r.estimate.ci_low, 930) << "the far stop came while the interval still reached below 930";
}

TEST(StageRules, StopAboveNeverStopsAMovingRate) {
  ScriptedCommand c(kT0);
  Climbing(c, 60);
  StageResult r = Measure(c, StopAbove(20, 100));  // ten times below the climbing stream's 1000+ samples/s
  ASSERT_TRUE(c.stopped_at());
  EXPECT_NEAR(*c.stopped_at() - kT0, 20, 0.2);
  EXPECT_FALSE(r.stopped_above);
}

TEST(StageRules, StopAboveWaitsForSettleTimeAndForATrace) {
  ScriptedCommand c(kT0);
  Scattered(c, 60, 1000);
  StageOptions o = StopAbove(30, 500);
  o.settle_s = 12;
  StageResult r = Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_GE(*c.stopped_at() - kT0, 12);
  EXPECT_LT(*c.stopped_at() - kT0, 13);
  EXPECT_TRUE(r.stopped_above);

  ScriptedCommand traced(kT0);
  Scattered(traced, 60, 1000);
  measure::HelperMessage trace = Typed(measure::MessageType::kTrace);
  traced.Message(15, trace);
  o = StopAbove(30, 500);
  o.trace_path = "/tmp/unused-trace.json";
  Measure(traced, o);
  ASSERT_TRUE(traced.stopped_at());
  EXPECT_GE(*traced.stopped_at() - kT0, 15);
  EXPECT_LT(*traced.stopped_at() - kT0, 16);
}

TEST(StageRules, AStartUpThatAteTheBudgetGetsTheGraceUntilThreeSecondsAreSteady) {
  ScriptedCommand c(kT0);
  c.Steady(17, 60, 0.1, 1000);  // reports from 17 s of a 20-s budget
  StageOptions o = Options(20);
  o.grace_s = 10;
  StageResult r = Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_GT(*c.stopped_at() - kT0, 20);
  EXPECT_LT(*c.stopped_at() - kT0, 30) << "it ends once 3 s are steady, not at the end of the grace";
  EXPECT_GE(r.estimate.steady_s, o.estimator.min_steady_s);
}

TEST(StageRules, TheGraceEndsWhereTheDataNeverBecomeSteadyEnough) {
  ScriptedCommand c(kT0);
  c.Steady(19.5, 60, 0.1, 1000);
  StageOptions o = Options(20);
  o.grace_s = 2;
  StageResult r = Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_NEAR(*c.stopped_at() - kT0, 22, 0.2);
  EXPECT_LT(r.estimate.steady_s, o.estimator.min_steady_s);
}

TEST(StageRules, WithoutReportsOrWithEnoughSteadyDataTheBudgetEndsTheStage) {
  ScriptedCommand silent(kT0);
  StageOptions o = Options(20);
  o.grace_s = 10;
  Measure(silent, o);
  ASSERT_TRUE(silent.stopped_at());
  EXPECT_NEAR(*silent.stopped_at() - kT0, 20, 0.2) << "nothing measured: no grace";
  ScriptedCommand moving(kT0);
  Climbing(moving, 60);
  Measure(moving, o);
  ASSERT_TRUE(moving.stopped_at());
  EXPECT_NEAR(*moving.stopped_at() - kT0, 20, 0.2) << "steady long enough, merely not converged: no grace";
}

TEST(StageRules, SettleTimeHoldsTheStopBackEvenWhenConverged) {
  ScriptedCommand c(kT0);
  c.Steady(0, 120, 0.1, 1000);
  StageOptions o = Options(40);
  o.settle_s = 25;
  Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_GE(*c.stopped_at() - kT0, 25);
  EXPECT_LT(*c.stopped_at() - kT0, 26);
}

TEST(StageRules, AStageAskedForATraceWaitsForItBeforeStoppingOnConvergence) {
  ScriptedCommand c(kT0);
  c.Steady(0, 120, 0.1, 1000);
  measure::HelperMessage trace = Typed(measure::MessageType::kTrace);
  trace.trace.path = "/tmp/trace.json";
  trace.trace.steps = 5;
  c.Message(30, trace);
  StageOptions o = Options(60);
  o.trace_path = "/tmp/trace.json";
  StageResult r = Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_GE(*c.stopped_at() - kT0, 30);
  EXPECT_LT(*c.stopped_at() - kT0, 31);
  ASSERT_TRUE(r.trace);
  EXPECT_EQ(r.trace->steps, 5);
}

TEST(StageRules, ARunForTheTraceAloneStopsAsSoonAsItComes) {
  ScriptedCommand c(kT0);
  Climbing(c, 60);  // never converges
  measure::HelperMessage trace = Typed(measure::MessageType::kTrace);
  trace.trace.path = "/tmp/trace.json";
  c.Message(4, trace);
  StageOptions o = Options(60);
  o.trace_path = "/tmp/trace.json";
  o.stop_after_trace = true;
  Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_NEAR(*c.stopped_at() - kT0, 4, 0.2);
}

TEST(StageRules, ReportsOfTheShutdownCountInTheTotalsNeverInTheEstimate) {
  ScriptedCommand c(kT0);
  c.Steady(0, 10, 0.1, 1000);  // the last report at 10 s has 10,000 samples behind it
  // The helper's last report, sent while the command stops: 50,000 samples more in 0.3 s.
  measure::HelperMessage last = Typed(measure::MessageType::kProgress);
  last.samples = 60000;
  last.steps = 1900;
  last.step_s = 10.3;
  c.Message(10.3, last);
  StageOptions o = Options(10);
  o.settle_s = 100;  // no stop on convergence: the budget ends it at 10 s
  c.ShutdownTakes(1);
  StageResult r = Measure(c, o);
  ASSERT_TRUE(c.stopped_at());
  EXPECT_NEAR(*c.stopped_at() - kT0, 10, 0.15);
  EXPECT_DOUBLE_EQ(r.totals.samples, 60000);
  EXPECT_NEAR(r.estimate.samples_per_s, 1000, 20);
}

TEST(StageRules, ACommandThatEndsOnItsOwnEndsTheStageWithItsOutcome) {
  ScriptedCommand c(kT0);
  c.Steady(0, 2.5, 0.1, 1000);
  run::RunOutcome failed;
  failed.exit_class = run::ExitClass::kGpuOom;
  failed.exit_code = 1;
  failed.detail = "GPU out of memory";
  c.Exit(3, failed);
  StageResult r = Measure(c, Options(40));
  EXPECT_FALSE(c.stopped_at());  // never asked to stop: it had ended
  EXPECT_EQ(r.outcome.exit_class, run::ExitClass::kGpuOom);
  EXPECT_NEAR(r.wall_s, 3, 0.15);
  EXPECT_TRUE(StageFailed(r));
}

TEST(StageRules, EveryRanksLoaderIsKeptAndRankZerosIsTheStages) {
  ScriptedCommand c(kT0);
  c.Steady(0, 60, 0.1, 1000);
  c.Message(0.5, LoaderOf(1, 2, 64));
  c.Message(0.6, LoaderOf(0, 2, 32));
  StageResult r = Measure(c, Options(40));
  EXPECT_EQ(r.world_size, 2);
  ASSERT_TRUE(r.loader);
  EXPECT_EQ(r.loader->batch_size, 32);
  ASSERT_EQ(r.rank_loaders.size(), 2u);
  EXPECT_EQ(r.rank_loaders.at(1).batch_size, 64);
}

TEST(StageRules, EachTrainerThatReportsIsWatchedOnTheSampler) {
  ScriptedCommand c(kT0);
  c.Steady(0, 60, 0.1, 500, 32, 100);
  c.Steady(0.05, 60, 0.1, 500, 32, 101);
  StageResult r = Measure(c, Options(40));
  EXPECT_THAT(c.trainers(), UnorderedElementsAre(100, 101));
  EXPECT_NEAR(r.estimate.samples_per_s, 1000, 20);  // the two streams add up
}

TEST(StageRules, KnobsErrorsAndANoLoaderEndAreKept) {
  ScriptedCommand c(kT0);
  measure::HelperMessage bad = Typed(measure::MessageType::kKnob);
  bad.knob_name = "num_workers";
  bad.knob_value = 0;
  bad.knob_error = "the DataLoader was built before saturate could set it";
  bad.automatic = true;
  measure::HelperMessage amp = Typed(measure::MessageType::kKnob);
  amp.knob_name = "amp";
  amp.knob_value = "bf16";
  amp.knob_flag = "--precision";
  measure::HelperMessage done = Typed(measure::MessageType::kDone);
  done.done_reason = "no-loader";
  c.Message(0.2, bad).Message(0.3, amp).Message(1, done);
  run::RunOutcome finished;
  finished.exit_class = run::ExitClass::kFinished;
  finished.exit_code = 0;
  c.Exit(1.2, finished);
  StageResult r = Measure(c, Options(40), StageKind::kLoader);
  EXPECT_TRUE(r.no_loader);
  EXPECT_EQ(r.knobs_seen.at("amp"), "bf16");
  EXPECT_EQ(r.knob_flags.at("amp"), "--precision");
  EXPECT_EQ(r.knob_errors.at("num_workers"), "the DataLoader was built before saturate could set it");
  EXPECT_THAT(r.knobs_auto, ElementsAre("num_workers"));
  EXPECT_EQ(r.estimate.samples_per_s, 0);  // nothing measured
  EXPECT_FALSE(StageMeasured(r));
}

// 600 parsed lines of 100 samples in 0.1 s, one every 0.1 s; `shape` sets line i's shares.
void ParsedLines(ScriptedCommand& c, const std::function<void(int, measure::ParsedLine&)>& shape) {
  for (int i = 1; i <= 600; ++i) {
    measure::ParsedLine l;
    l.observation.duration_s = 0.1;
    l.observation.samples = 100;
    shape(i, l);
    c.Line(i * 0.1, l);
  }
}

TEST(StageRules, ParsedLinesGiveTheRateAndTheDataShareWithoutTheHelper) {
  ScriptedCommand c(kT0);
  ParsedLines(c, [](int i, measure::ParsedLine& l) { l.data_wait_share = i % 2 ? 0.2 : 0.4; });
  StageResult r = Measure(c, Options(40));
  EXPECT_TRUE(r.parsed_lines);
  EXPECT_FALSE(r.helper_seen);
  ASSERT_TRUE(r.data_wait_share);
  EXPECT_NEAR(*r.data_wait_share, 0.3, 0.01);
  EXPECT_NEAR(r.estimate.samples_per_s, 1000, 20);
}

// A phase the pattern names (saturate-example's metrics_s, measure/line_parser.h) is the mean of its shares over the
// lines: what the step-overhead verdict reads of a --parse probe (probe/verdict_test.cc).
TEST(StageRules, ParsedLinesGiveTheNamedPhasesShares) {
  ScriptedCommand c(kT0);
  ParsedLines(c, [](int i, measure::ParsedLine& l) {
    l.data_wait_share = 0.05;
    l.phase_shares["metrics"] = i % 2 ? 0.4 : 0.5;
  });
  StageResult r = Measure(c, Options(40));
  ASSERT_EQ(r.phase_shares.count("metrics"), 1u);
  EXPECT_NEAR(r.phase_shares.at("metrics"), 0.45, 0.01);
  ASSERT_TRUE(r.data_wait_share);
  EXPECT_NEAR(*r.data_wait_share, 0.05, 0.001);
}

TEST(StageRules, TheHelpersWaitShareIsTheDataWait) {
  ScriptedCommand c(kT0);
  c.Steady(0, 60, 0.1, 1000, 32, 100, "run", 0.25);
  StageResult r = Measure(c, Options(40));
  ASSERT_TRUE(r.data_wait_share);
  EXPECT_NEAR(*r.data_wait_share, 0.25, 0.01);
}

TEST(StageRules, TheTreesOpenFilesAreScannedEveryTwoSeconds) {
  ScriptedCommand c(kT0);
  Climbing(c, 60);
  c.OpenFiles({"/data/a.jpg", "/data/b.jpg"});
  StageResult r = Measure(c, Options(10));
  EXPECT_GE(c.scans(), 4);
  EXPECT_LE(c.scans(), 6);
  EXPECT_THAT(r.open_data_paths, ElementsAre("/data/a.jpg", "/data/b.jpg"));
}

TEST(StageRules, TheHelpersDataFilesAreCollectedFromEveryProcess) {
  ScriptedCommand c(kT0);
  c.Steady(0, 60, 0.1, 1000);
  measure::HelperMessage main = Typed(measure::MessageType::kFiles, 100);
  main.files.paths = {"/data/b.jpg", "/data/a.jpg"};
  main.files.opens = 2;
  measure::HelperMessage worker = Typed(measure::MessageType::kFiles, 101);
  worker.files.paths = {"/data/a.jpg", "/data/c.jpg"};
  worker.files.writes = {"/ckpt/model.pt"};
  worker.files.opens = 5;
  measure::HelperMessage later = worker;  // the worker's next message: a count update, no new path
  later.files.paths.clear();
  later.files.writes.clear();
  later.files.opens = 9;
  c.Message(0.5, main).Message(0.6, worker).Message(1.6, later);
  StageResult r = Measure(c, Options(10));
  EXPECT_THAT(r.data_files, ElementsAre("/data/a.jpg", "/data/b.jpg", "/data/c.jpg"));
  EXPECT_THAT(r.written_files, ElementsAre("/ckpt/model.pt"));
  EXPECT_EQ(r.data_opens, 2 + 9);  // each process's latest count
}

TEST(StageRules, TelemetryIsTheSteadyPartsNotTheWarmUps) {
  ScriptedCommand c(kT0);
  // A slow first second (warm-up), then 1000 samples/s.
  double samples = 0;
  for (double t = 0; t <= 60; t += 0.1) {
    measure::HelperMessage m = Typed(measure::MessageType::kProgress);
    m.samples = samples;
    m.steps = static_cast<int64_t>(t * 10);
    c.Message(t, m);
    samples += t < 2 ? 10 : 100;
  }
  // The tree at 400% CPU during the warm-up, 100% after it.
  std::vector<telemetry::Sample> samples_seen;
  for (double t = 0; t <= 60; t += 0.25) {
    telemetry::Sample s;
    s.mono_s = kT0 + t;
    telemetry::ProcTreeSample tree;
    tree.alive = true;
    tree.cpu_pct = t < 2 ? 400 : 100;
    tree.blocked_count = t < 2 ? 0 : 1;
    tree.rchar_per_s = 4096;
    s.tree = tree;
    samples_seen.push_back(s);
  }
  c.Samples(samples_seen);
  StageResult r = Measure(c, Options(40));
  ASSERT_TRUE(r.estimate.converged);
  EXPECT_GE(r.estimate.warmup_s, 1.5);
  ASSERT_TRUE(r.telemetry.tree_cpu_pct);
  EXPECT_DOUBLE_EQ(r.telemetry.tree_cpu_pct->max, 100);
  // The storage readings over the same part: a process blocked on reads at every steady tick.
  ASSERT_TRUE(r.telemetry.tree_blocked);
  EXPECT_DOUBLE_EQ(r.telemetry.tree_blocked->mean, 1);
  EXPECT_DOUBLE_EQ(r.telemetry.tree_rchar_per_s->mean, 4096);
}

}  // namespace
}  // namespace sat::core
