#include "sweep/controller.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "sweep/plan.h"
#include "sweep/sweep_journal.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

Spec GridSpec(const std::vector<std::string>& grid, const std::string& script) {
  auto spec = SpecFromGrid(grid, {"/bin/sh", "-c", script});
  EXPECT_TRUE(spec) << spec.error().message;
  return *spec;
}

// Fast settings: real processes, but ticks and measurements in tenths of a second.
SweepOptions Options(const TempDir& dir, std::vector<SweepEvent>* events = nullptr) {
  SweepOptions o;
  o.journal_path = dir.File("s.journal");
  o.log_dir = dir.File("s.logs");
  o.tick_s = 0.05;
  o.warmup_s = 0.1;
  o.window_s = 0.1;
  o.stop_grace_s = 1;
  if (events) o.on_event = [events](const SweepEvent& e) { events->push_back(e); };
  return o;
}

std::unique_ptr<Journal> OpenJournal(const std::string& path) {
  auto journal = Journal::Open(path);
  EXPECT_TRUE(journal);
  return std::move(*journal);
}

TEST(RunSweep, RunsEveryRunOnceRecordsMetricsAndResumesWithNothingLeft) {
  TempDir dir;
  Spec spec = GridSpec({"i=1,2,3,4"}, "sleep 0.2; echo loss={i}");
  spec.metric = MetricSpec{"loss", Goal::kMinimize, std::nullopt};
  spec.saturate.metric_pattern = "loss=(?P<loss>[0-9.]+)";
  std::vector<SweepEvent> events;
  const SweepOptions o = Options(dir, &events);
  auto result = RunSweep(spec, o);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 4);
  EXPECT_EQ(result->started, 4);
  EXPECT_FALSE(result->interrupted);

  auto journal = OpenJournal(o.journal_path);
  EXPECT_TRUE(journal->Verify());
  const std::vector<RunRecord> runs = *journal->Runs();
  ASSERT_EQ(runs.size(), 4u);
  for (const RunRecord& r : runs) {
    EXPECT_EQ(r.state, RunState::kDone);
    EXPECT_EQ(r.attempts, 1);
    EXPECT_EQ(r.best_metrics["loss"], r.params["i"].get<double>());
    const auto attempts = *journal->Attempts(r.key);
    ASSERT_EQ(attempts.size(), 1u);
    EXPECT_TRUE(std::filesystem::exists(attempts[0].log_dir + "/stdout.log"));
  }
  const auto started = std::count_if(events.begin(), events.end(),
                                     [](const SweepEvent& e) { return e.kind == SweepEvent::Kind::kStarted; });
  EXPECT_EQ(started, 4);

  // The same journal again: refused without --resume; with it, nothing is left to run.
  auto again = RunSweep(spec, o);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("--resume"), std::string::npos);
  SweepOptions resume = o;
  resume.resume = true;
  auto resumed = RunSweep(spec, resume);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(resumed->started, 0);
  EXPECT_EQ(resumed->counts.done, 4);
}

// Hyperband after a resume: the cut-off comes from the journaled metric points of a run finished in an earlier
// session. Alone, the live run would be its own cut-off and never stop.
TEST(RunSweep, HyperbandOnResumeJudgesByTheJournaledHistories) {
  TempDir dir;
  Spec spec = GridSpec({"i=1,5"}, "for n in 1 2 3 4 5 6 7 8 9 10; do echo loss={i}; sleep 0.1; done");
  spec.metric = MetricSpec{"loss", Goal::kMinimize, std::nullopt};
  spec.saturate.metric_pattern = "loss=(?P<loss>[0-9.]+)";
  spec.early_terminate = HyperbandSpec{2, std::nullopt, 0, 3, false};
  const SweepOptions o = Options(dir);
  {
    // The earlier session: run i=1 finished, reporting loss 1 three times.
    auto journal = OpenJournal(o.journal_path);
    const auto plan = *ExpandRuns(spec, 0);
    ASSERT_TRUE(journal->EnsureRuns(SweepInfo{spec.source, SpecHash(spec, 0), 0, spec.metric}, plan));
    auto id = journal->BeginAttempt(plan[0].key, std::nullopt, 0, dir.File("old"));
    ASSERT_TRUE(id);
    const std::vector<MetricPoint> points(3, MetricPoint{"loss", 1, std::nullopt, 1});
    AttemptOutcome finished;
    finished.exit_class = run::ExitClass::kFinished;
    finished.exit_code = 0;
    ASSERT_TRUE(journal->EndAttempt(*id, finished, points, {}, RetryPolicy{}));
  }
  SweepOptions resume = o;
  resume.resume = true;
  auto result = RunSweep(spec, resume);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->started, 1);
  auto journal = OpenJournal(o.journal_path);
  const RunRecord five = (*journal->Runs())[1];
  EXPECT_EQ(five.state, RunState::kDone);
  EXPECT_TRUE(five.stopped_early);
  EXPECT_EQ(five.failures, 0);
  EXPECT_LT((*journal->LastAttemptMetrics(five.key)).size(), 10u);
  EXPECT_TRUE(journal->Verify());
}

// Runs a one-run sweep to its end; returns the result and the run's record and attempts from the journal.
struct OneRun {
  SweepResult result;
  RunRecord record;
  std::vector<AttemptRecord> attempts;
};
OneRun RunOne(const Spec& spec, const TempDir& dir) {
  const SweepOptions o = Options(dir);
  auto result = RunSweep(spec, o);
  EXPECT_TRUE(result) << result.error().message;
  auto journal = OpenJournal(o.journal_path);
  OneRun one{result.ok() ? *result : SweepResult{}, (*journal->Runs()).at(0), {}};
  one.attempts = *journal->Attempts(one.record.key);
  return one;
}

TEST(RunSweep, AFailingRunIsRetriedThenFails) {
  TempDir dir;
  Spec spec = GridSpec({"code=3"}, "exit {code}");
  spec.saturate.retries = 1;
  const OneRun one = RunOne(spec, dir);
  EXPECT_EQ(one.result.counts.failed, 1);
  EXPECT_EQ(one.record.attempts, 2);
  EXPECT_EQ(one.record.failures, 2);
}

TEST(RunSweep, ARunIsStoppedAtItsTimeout) {
  TempDir dir;
  Spec spec = GridSpec({"s=30"}, "sleep {s}");
  spec.saturate.timeout_s = 0.3;
  const OneRun one = RunOne(spec, dir);
  EXPECT_LT(one.result.wall_s, 10);
  EXPECT_EQ(one.record.state, RunState::kFailed);
  EXPECT_EQ(one.attempts.at(0).exit_class, "timed_out");
}

TEST(RunSweep, ThroughputAndMetricsComeFromTheHelper) {
  TempDir dir;
  const std::string script = dir.File("train.py");
  std::ofstream(script) << "import time, saturate\n"
                           "for batch in saturate.track([[0] * 8] * 40):\n"
                           "    time.sleep(0.01)\n"
                           "saturate.report(loss=0.5)\n";
  auto spec = SpecFromGrid({"seed=1"}, {"/usr/bin/python3", script, "--seed", "{seed}"});
  ASSERT_TRUE(spec);
  const RunRecord r = RunOne(*spec, dir).record;
  EXPECT_EQ(r.state, RunState::kDone);
  ASSERT_TRUE(r.measurements.throughput_samples_per_s);
  EXPECT_GT(*r.measurements.throughput_samples_per_s, 100);  // 8 samples per ~10 ms step
  EXPECT_LT(*r.measurements.throughput_samples_per_s, 1000);
  EXPECT_EQ(r.best_metrics["loss"], 0.5);
  EXPECT_TRUE(r.measurements.rss_bytes);
}

// Two runs of a script that prepares data for 2.5 s at a full core before its first training step, after
// `preamble` made its steps expected. Returns the seconds between the two runs' starts: a run judged by its CPU
// would be measured 1.1 s in, and the second run would join it during the first one's start-up. (The warm-up
// leaves a loaded machine a second to start python and send the hello or map torch: with 0.1 s, a slow start-up
// was judged by its CPU before the preamble ran, and the test failed under ctest -j2.)
double SecondRunJoinsAfter(const std::string& preamble) {
  TempDir dir;
  const std::string script = dir.File("train.py");
  std::ofstream(script) << preamble
                        << "import time, saturate\n"
                           "end = time.monotonic() + 2.5\n"
                           "while time.monotonic() < end:\n"
                           "    pass\n"
                           "for batch in saturate.track([[0] * 8] * 40):\n"
                           "    time.sleep(0.01)\n";
  auto spec = SpecFromGrid({"seed=1,2"}, {"/usr/bin/python3", script, "--seed", "{seed}"});
  EXPECT_TRUE(spec);
  std::vector<SweepEvent> events;
  SweepOptions o = Options(dir, &events);
  o.warmup_s = 1;
  auto result = RunSweep(*spec, o);
  EXPECT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 2);
  std::vector<double> started;
  for (const SweepEvent& e : events) {
    if (e.kind == SweepEvent::Kind::kStarted) started.push_back(e.elapsed_s);
  }
  EXPECT_EQ(started.size(), 2u);
  // Held in a variable: a range-for over `*journal->Runs()` would read a temporary already destroyed.
  auto runs = OpenJournal(o.journal_path)->Runs();
  EXPECT_TRUE(runs);
  for (const RunRecord& r : runs.ok() ? *runs : std::vector<RunRecord>{}) {
    EXPECT_TRUE(r.measurements.throughput_samples_per_s) << r.key;
    EXPECT_GT(r.measurements.throughput_samples_per_s.value_or(0), 100) << "training only: 8 samples per 10 ms";
  }
  return started.size() == 2 ? started[1] - started[0] : 0;
}

// On real processes, the sign only a real tree gives: torch mapped (measure::InstrumentedRun::LookForTorch). The
// rule itself, with the helper's hello too, is SweepRules.ARunStartingUpIsNotMeasuredSoNoNeighbourJoinsIt.
TEST(RunSweep, ARunThatMappedTorchIsStartingUpSoNoNeighbourJoinsIt) {
  // Nothing sent before the first step, but torch is loaded: its steps will come.
  EXPECT_GE(SecondRunJoinsAfter("import torch\n"), 2.5);
}

TEST(RunSweep, AutoOffReachesTheRunsEnvironment) {
  TempDir dir;
  for (const bool on : {true, false}) {
    const std::string out = dir.File(on ? "on" : "off");
    Spec spec = GridSpec({"i=1"}, "(printenv SATURATE_AUTO || echo unset) >" + out + ".{i}");
    spec.saturate.auto_instrumentation = on;
    SweepOptions o = Options(dir);
    o.journal_path = out + ".journal";
    ASSERT_TRUE(RunSweep(spec, o));
    std::string value;
    std::ifstream(out + ".1") >> value;
    EXPECT_EQ(value, on ? "unset" : "0");
  }
}

TEST(RunSweep, ShapeNamesMustBeParameters) {
  TempDir dir;
  Spec spec = GridSpec({"bs=32,64"}, "echo {bs}");
  spec.saturate.shape = {"bz"};
  auto result = RunSweep(spec, Options(dir));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().exit_code, kExitUsage);
  EXPECT_EQ(result.error().message,
            "saturate.shape: 'bz' is not a parameter of this sweep (did you mean 'bs'?); parameters: bs");
}

TEST(SweepPaths, JournalBesideTheSpecOrNamedByThePlan) {
  Spec spec;
  spec.source = "tune/lr.yaml";
  EXPECT_EQ(DefaultJournalPath(spec), "tune/lr.journal");
  spec.source = "sweep.yml";
  EXPECT_EQ(DefaultJournalPath(spec), "sweep.journal");
  spec.source = "sweep.json";
  EXPECT_EQ(DefaultJournalPath(spec), "sweep.json.journal");
  const Spec grid = GridSpec({"lr=0.1,0.01"}, "train --lr {lr}");
  EXPECT_EQ(DefaultJournalPath(grid), "saturate-sweep-" + SpecHash(grid, 0) + ".journal");
  EXPECT_EQ(LogDirFor("tune/lr.journal"), "tune/lr.logs");
  EXPECT_EQ(LogDirFor("runs.db"), "runs.db.logs");
}

TEST(SweepPaths, ShapeOfNamesTheListedParameters) {
  Spec spec = GridSpec({"bs=32,64", "lr=0.1"}, "train --bs {bs} --lr {lr}");
  const nlohmann::json params = {{"bs", 32}, {"lr", 0.1}};
  EXPECT_EQ(ShapeOf(spec, params), "");
  spec.saturate.shape = {"bs"};
  EXPECT_EQ(ShapeOf(spec, params), "bs=32");
  spec.saturate.shape = {"lr", "bs"};
  EXPECT_EQ(ShapeOf(spec, params), "lr=0.1,bs=32");
}

}  // namespace
}  // namespace sat::sweep
