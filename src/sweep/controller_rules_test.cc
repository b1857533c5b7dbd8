// The sweep loop's rules (RunSweep) on scripted attempts (sweep/test_scripted_runner.h), in milliseconds: when a
// neighbour may join a run, what an out-of-memory while packed means, how a start that fails for want of a
// resource is tried again, when early termination stops a run, and what of a run's reports reaches the journal. The same loop on real processes:
// sweep/controller_test.cc and tests/e2e/sweep_*.sh.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sweep/controller.h"
#include "sweep/degree_record.h"
#include "sweep/status.h"
#include "sweep/plan.h"
#include "sweep/test_scripted_runner.h"
#include "telemetry/gpu.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

using fixtures::AttemptScript;
using fixtures::ScriptedRunner;

// Runs "run 1", "run 2", ...: commands the scripted runner tells apart and never starts.
Spec Runs(int n) {
  std::string values;
  for (int i = 1; i <= n; ++i) values += (i > 1 ? "," : "") + std::to_string(i);
  auto spec = SpecFromGrid({"i=" + values}, {"/bin/sh", "-c", "run {i}"});
  EXPECT_TRUE(spec) << spec.error().message;
  return *spec;
}

// Which run a launch is (1-based), from its command.
int RunOf(const Launch& launch) { return std::stoi(launch.argv.back().substr(4)); }

// The CPU device's defaults (1 s warm-up, 1 s window), two runs at most on it, ticks of 0.1 s.
SweepOptions Options(const TempDir& dir, ScriptedRunner& runner, std::vector<SweepEvent>* events = nullptr) {
  SweepOptions o;
  o.journal_path = dir.File("s.journal");
  o.log_dir = dir.File("s.logs");
  o.tick_s = 0.1;
  o.packing.max_per_device = 2;
  o.runner = &runner;
  if (events) o.on_event = [events](const SweepEvent& e) { events->push_back(e); };
  return o;
}

std::vector<RunRecord> Records(const SweepOptions& o) {
  auto journal = Journal::Open(o.journal_path);
  EXPECT_TRUE(journal);
  auto runs = (*journal)->Runs();
  EXPECT_TRUE(runs);
  return runs.ok() ? *runs : std::vector<RunRecord>{};
}

// Two runs whose first `startup_s` go to preparing data at a full core before the first training step, then train
// at 800 samples/s until `startup_s + 3`; `announce` says how each shows, before its first step, that steps will
// come ("hello", "torch", or "" for nothing). Returns when the second run started after the first.
double SecondRunJoinsAfter(const std::string& announce, double startup_s) {
  TempDir dir;
  ScriptedRunner runner([&](const Launch&, int) {
    AttemptScript s;
    if (announce == "hello") s.hello_at_s = 0.3;
    if (announce == "torch") s.torch_at_s = 0.3;
    s.steps_from_s = startup_s;
    s.rate = 800;
    s.exit_at_s = startup_s + 3;
    return s;
  });
  SweepOptions o = Options(dir, runner);
  auto result = RunSweep(Runs(2), o);
  EXPECT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 2);
  EXPECT_EQ(runner.started().size(), 2u);
  if (runner.started().size() != 2) return 0;
  return runner.started()[1]->start_t - runner.started()[0]->start_t;
}

// What RunSweep.ARunStartingUpIsNotMeasuredSoNoNeighbourJoinsIt checks on two real Python processes (17 s).
TEST(SweepRules, ARunStartingUpIsNotMeasuredSoNoNeighbourJoinsIt) {
  // Judged by its busy tree alone, a run is measured after the warm-up and the window: the neighbour joins then,
  // in the middle of the data preparation.
  EXPECT_LT(SecondRunJoinsAfter("", 5), 3);
  // A run whose helper said hello, or whose tree mapped torch, will report steps: it is starting up until its
  // first one, and nothing joins it before.
  EXPECT_GE(SecondRunJoinsAfter("hello", 5), 5);
  EXPECT_GE(SecondRunJoinsAfter("torch", 5), 5);
}

TEST(SweepRules, AnOutOfMemoryWhilePackedIsQueuedAgainAndNotCountedAsAFailure) {
  TempDir dir;
  std::map<int, int> attempts;
  ScriptedRunner runner([&](const Launch& launch, int) {
    const int run = RunOf(launch);
    const int attempt = ++attempts[run];
    AttemptScript s;
    s.rate = 500;
    s.exit_at_s = run == 1 ? 8 : 3;
    if (run == 2 && attempt == 1) {
      s.outcome = fixtures::Outcome(run::ExitClass::kHostOom, "host out of memory: MemoryError", 1);
    }
    return s;
  });
  std::vector<SweepEvent> events;
  SweepOptions o = Options(dir, runner, &events);
  Spec spec = Runs(2);
  spec.saturate.retries = 0;  // a counted failure would fail the run
  auto result = RunSweep(spec, o);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 2);
  const std::vector<RunRecord> runs = Records(o);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].state, RunState::kDone);
  EXPECT_EQ(runs[1].attempts, 2);
  EXPECT_EQ(runs[1].failures, 0);
  bool said = false;
  for (const SweepEvent& e : events) {
    said |= e.text.find("out of memory with 2 runs on cpu: queued again, not counted as a failure") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(SweepRules, AStartThatFailsForWantOfAResourceWaitsLongerEachTimeAndCostsNoRetry) {
  TempDir dir;
  ScriptedRunner runner([](const Launch&, int before) {
    AttemptScript s;
    if (before < 3) {
      s.exit_at_s = 0;
      s.outcome = fixtures::Outcome(run::ExitClass::kStartFailed,
                                    "cannot start /bin/sh: fork: Resource temporarily unavailable", -1);
      s.outcome.start_transient = true;
    } else {
      s.rate = 100;
      s.exit_at_s = 2;
    }
    return s;
  });
  SweepOptions o = Options(dir, runner);
  Spec spec = Runs(1);
  spec.saturate.retries = 0;
  auto result = RunSweep(spec, o);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 1);
  ASSERT_EQ(runner.started().size(), 4u);
  // 0.25 s doubled per failure, times a jitter of 0.5-1.5 (sweep/retry.h TransientStartDelay).
  for (size_t k = 1; k < 4; ++k) {
    const double waited = runner.started()[k]->start_t - runner.started()[k - 1]->end_t;
    EXPECT_GE(waited, 0.25 * (1 << (k - 1)) * 0.5) << "after start failure " << k;
    EXPECT_LE(waited, 0.25 * (1 << (k - 1)) * 1.5 + 0.2) << "after start failure " << k;
  }
  const RunRecord r = Records(o).at(0);
  EXPECT_EQ(r.attempts, 4);
  EXPECT_EQ(r.failures, 0);
}

// What e2e.sweep_hyperband checks on real processes (W&B's hyperband, sweep/hyperband.h), here on the loop alone:
// with bands at 2, 6, 18, ... iterations, a run whose loss at its second report is worse than the cut-off of every
// run's values there (ranked int(n / eta)) is stopped, and recorded done, stopped early, with no failure.
TEST(SweepRules, HyperbandStopsARunBehindAtItsBand) {
  TempDir dir;
  ScriptedRunner runner([](const Launch& launch, int) {
    const double loss = RunOf(launch) == 3 ? 5 : 1;
    AttemptScript s;
    s.rate = 100;
    for (int k = 1; k <= 10; ++k) s.metrics.push_back({0.5 * k, {{"loss", loss}}});
    s.exit_at_s = 6;
    return s;
  });
  SweepOptions o = Options(dir, runner);
  Spec spec = Runs(3);
  spec.metric = MetricSpec{"loss", Goal::kMinimize, std::nullopt};
  spec.early_terminate = HyperbandSpec{2, std::nullopt, 0, 3, false};
  auto result = RunSweep(spec, o);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 3);
  const std::vector<RunRecord> runs = Records(o);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_FALSE(runs[0].stopped_early);
  EXPECT_FALSE(runs[1].stopped_early);
  EXPECT_TRUE(runs[2].stopped_early);
  EXPECT_EQ(runs[2].failures, 0);
  // Stopped at its band (its second report, 1 s in), not run to its end at 6 s.
  ASSERT_EQ(runner.started().size(), 3u);
  const auto& third = *runner.started()[2];
  EXPECT_LT(third.end_t - third.start_t, 2);
}

TEST(SweepRules, ARunsReportsReachTheJournalThroughputAndMetrics) {
  TempDir dir;
  ScriptedRunner runner([](const Launch&, int) {
    AttemptScript s;
    s.rate = 800;
    s.metrics = {{1.0, {{"loss", 0.9}}}, {2.0, {{"loss", 0.5}}}};
    s.exit_at_s = 5;
    return s;
  });
  SweepOptions o = Options(dir, runner);
  Spec spec = Runs(1);
  spec.metric = MetricSpec{"loss", Goal::kMinimize, std::nullopt};
  auto result = RunSweep(spec, o);
  ASSERT_TRUE(result) << result.error().message;
  const RunRecord r = Records(o).at(0);
  EXPECT_EQ(r.state, RunState::kDone);
  ASSERT_TRUE(r.measurements.throughput_samples_per_s);
  EXPECT_NEAR(*r.measurements.throughput_samples_per_s, 800, 8);
  EXPECT_EQ(r.best_metrics.at("loss"), 0.5);
  ASSERT_TRUE(r.measurements.rss_bytes);
  EXPECT_EQ(*r.measurements.rss_bytes, 200ull << 20);
}

// The most attempts alive at once among those that started at or after `from` (runner time).
int MostAtOnceFrom(const ScriptedRunner& runner, double from) {
  int most = 0;
  for (const auto& a : runner.started()) {
    if (a->start_t < from) continue;
    int alive = 0;
    for (const auto& b : runner.started()) alive += b->start_t <= a->start_t && b->end_t > a->start_t;
    most = std::max(most, alive);
  }
  return most;
}

// Runs that train for a set time whatever their speed (two sharing the machine each train at 60% of their rate
// alone: the device's progress rate is +20%, so growth pays; odd runs train at 100 samples/s alone, even ones at 130)
// leave the same duration and different amounts trained: once two have ended, the sweep takes them for runs on the
// clock and runs them one per device, and says so. The same runs doing a fixed amount of work stay packed.
TEST(SweepRules, RunsThatStopOnTheClockGoOnePerDevice) {
  for (const bool clock : {true, false}) {
    TempDir dir;
    ScriptedRunner runner([&](const Launch& launch, int) {
      AttemptScript s;
      s.rate = RunOf(launch) % 2 ? 100 : 130;
      if (clock) s.exit_at_s = 6;
      else s.work_samples = 400;
      return s;
    });
    runner.speed = [](int live) { return live <= 1 ? 1.0 : 0.6; };
    std::vector<SweepEvent> events;
    SweepOptions o = Options(dir, runner, &events);
    auto result = RunSweep(Runs(8), o);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->counts.done, 8) << clock;
    ASSERT_EQ(runner.started().size(), 8u) << "every run once";
    // By the time the second run ends, both are known.
    const double second_end = runner.started()[1]->end_t;
    if (clock) {
      ASSERT_EQ(result->clocked.size(), 1u);
      EXPECT_NE(result->clocked.begin()->second.find("2 runs ended after 5.7-5.7 s of training while they trained"),
                std::string::npos)
          << result->clocked.begin()->second;
      EXPECT_EQ(MostAtOnceFrom(runner, second_end), 1) << "one per device once the clock is seen";
      bool said = false;
      for (const SweepEvent& e : events) said |= e.text.find("runs stop on the clock") != std::string::npos;
      EXPECT_TRUE(said);
      EXPECT_NE(ClockedText(result->clocked, false).find("one per device, so each trains as long as it would alone"),
                std::string::npos);
    } else {
      EXPECT_TRUE(result->clocked.empty());
      EXPECT_EQ(MostAtOnceFrom(runner, second_end), 2) << "a fixed amount of work packs as usual";
    }
  }
}

// Runs of about 2.5 s: the second starts (a growth step) under the default CPU warm-up and window (1 s each), which it
// does not outlive. Once the first has ended and shown how short the runs are, the second's meter takes the
// shorter span too, so it is measured while it lives and the device grows before it ends, instead of holding one run
// at a time until it does.
TEST(SweepRules, ARunLiveWhenTheShapeTurnsOutShortIsMeasuredOnTheShorterSpan) {
  TempDir dir;
  ScriptedRunner runner([](const Launch&, int started_before) {
    AttemptScript s;
    s.rate = 100;
    s.work_samples = started_before == 1 ? 190 : 230;  // 1.9 or 2.3 s of training after 0.2 s of start-up
    return s;
  });
  SweepOptions o = Options(dir, runner);
  o.packing.max_per_device = 4;
  auto result = RunSweep(Runs(6), o);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 6);
  const auto& started = runner.started();
  ASSERT_EQ(started.size(), 6u);
  ASSERT_LT(started[0]->end_t, started[1]->end_t);
  EXPECT_GT(started[1]->start_t, started[0]->start_t) << "the second is a growth step";
  EXPECT_LT(started[2]->start_t, started[1]->end_t) << "the device grew again while the second still ran";
}

// Quick growth on the CPU device (packing.h rule 9): runs of fast steps at a steady rate are rated a window into their
// training (two half windows agree), so the second starts about a second after the first's first step (not after its
// 1-s warm-up and 1-s window and the memory settling), and the +100% it brings is read early, so the next two follow
// a window after it. Runs of coarse steps (one a half window) wait for measurement and the full check.
TEST(SweepRules, OnTheCpuAGainFarAboveNoiseGrowsWithinHalfWindows) {
  for (const double every_s : {0.05, 0.5}) {
    SCOPED_TRACE(every_s);
    TempDir dir;
    ScriptedRunner runner([&](const Launch&, int) {
      AttemptScript s;
      s.rate = 100;
      s.every_s = every_s;
      s.work_samples = 1000;
      return s;
    });
    std::vector<SweepEvent> events;
    SweepOptions o = Options(dir, runner, &events);
    o.packing.max_per_device = 8;
    auto result = RunSweep(Runs(8), o);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->counts.done, 8);
    const auto& started = runner.started();
    ASSERT_EQ(started.size(), 8u);
    // Read early from the newcomer's first half window (rule 9), or from the runs' own progress (rule 10).
    bool early = false, progress = false;
    for (const SweepEvent& e : events) {
      early |= e.text.find("read early") != std::string::npos;
      progress |= e.text.find("own progress") != std::string::npos;
    }
    if (every_s < 0.1) {
      EXPECT_LE(started[1]->start_t - started[0]->start_t, 1.4);
      EXPECT_LE(started[3]->start_t - started[0]->start_t, 2.6);
      EXPECT_TRUE(early || progress);
    } else {
      EXPECT_GE(started[1]->start_t - started[0]->start_t, 2.0) << "measured: warm-up and window";
      EXPECT_GE(started[3]->start_t - started[0]->start_t, 3.0) << "the full check: warm-up and window";
      EXPECT_FALSE(early);
    }
  }
}

// Runs of a couple of seconds on the CPU device (packing.h rule 10): a run leaves during nearly every gain check, yet
// the device's progress at each degree, gathered between the comings and goings, proves the degrees that pay. Four
// cores: up to four runs train at full speed, more share them.
TEST(SweepRules, ShortRunsGrowFromTheDevicesOwnProgressWhereChecksAreCutShort) {
  TempDir dir;
  ScriptedRunner runner([](const Launch& launch, int) {
    AttemptScript s;
    s.rate = 100;
    s.every_s = 0.05;
    s.work_samples = 150 + 25 * (RunOf(launch) % 5);  // 1.5-2.5 s alone, so departures come at odd times
    return s;
  });
  runner.speed = [](int live) { return live <= 4 ? 1.0 : 4.0 / live; };
  std::vector<SweepEvent> events;
  SweepOptions o = Options(dir, runner, &events);
  o.packing.max_per_device = 8;
  auto result = RunSweep(Runs(24), o);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->counts.done, 24);
  int progress = 0;
  for (const SweepEvent& e : events) progress += e.text.find("own progress") != std::string::npos;
  EXPECT_GE(progress, 1) << "a degree proven from the device's own progress";
  // The most runs alive at once, from the runner's starts and ends.
  std::vector<std::pair<double, int>> changes;
  for (const auto& a : runner.started()) changes.push_back({a->start_t, 1}), changes.push_back({a->end_t, -1});
  std::sort(changes.begin(), changes.end());
  int alive = 0, peak = 0;
  for (const auto& [t, d] : changes) peak = std::max(peak, alive += d);
  EXPECT_GE(peak, 4);
  // Four at once from the start would take about 13.5 s; without rule 10 the sweep took 19.6 s, its checks at 4 cut
  // short again and again.
  EXPECT_LE(result->wall_s, 17.5);
}

// The 16 short runs of bench/sweep_bench.sh (RUNS_PER_KIND=8 RUN_SECONDS=2) on a model of this project's 2-core
// machine: odd runs a busy loop (a core each), even ones 5 ms of CPU in each 50-ms step and asleep for the rest; each
// makes 40 steps, 2 s alone, after 0.1 s of start-up. Where the runs alive want more cores than there are, the CPU
// part of every step slows by the same share. Returns each run's speed (1: as alone).
double BenchMixSpeed(bool busy, const std::vector<bool>& alive_busy) {
  constexpr double kCores = 2;
  double demand = 0;
  for (bool b : alive_busy) demand += b ? 1.0 : 0.1;
  const double share = std::min(1.0, kCores / std::max(demand, 1e-9));
  return busy ? share : 0.050 / (0.005 / share + 0.045);
}

bool BenchBusy(const std::string& command) { return std::stoi(command.substr(4)) % 2 == 1; }

// The makespan of GNU parallel -jK on the model above: the runs in order, K at a time, each slot refilled as a run
// ends (millisecond steps).
double BenchFixedCount(int runs, int k) {
  struct Run {
    bool busy;
    double start, done;
  };
  std::vector<Run> alive;
  int next = 1;
  double t = 0;
  constexpr double kDt = 0.001, kStartup = 0.1, kSteps = 40, kStepsPerS = 20;
  while (next <= runs || !alive.empty()) {
    while (static_cast<int>(alive.size()) < k && next <= runs) alive.push_back(Run{next++ % 2 == 1, t, 0});
    std::vector<bool> training;
    for (const Run& r : alive) {
      if (t >= r.start + kStartup) training.push_back(r.busy);
    }
    for (Run& r : alive) {
      if (t >= r.start + kStartup) r.done += BenchMixSpeed(r.busy, training) * kStepsPerS * kDt;
    }
    std::erase_if(alive, [&](const Run& r) { return r.done >= kSteps; });
    t += kDt;
  }
  return t;
}

// One sweep of the bench's 16 short runs on the model above, its packing record in `record`; returns its makespan
// and, in `trace`, each run's start and end and the sweep's notes.
double BenchMixSweep(const TempDir& dir, const std::string& name, const std::string& record, std::string* trace) {
  ScriptedRunner runner([](const Launch&, int) {
    AttemptScript s;
    s.hello_at_s = 0.05;
    s.steps_from_s = 0.1;
    s.rate = 20;  // samples (= steps) per second alone
    s.every_s = 0.05;
    s.work_samples = 40;
    return s;
  });
  runner.speed_of = [](const ScriptedRunner::Started& a, const std::vector<const ScriptedRunner::Started*>& alive) {
    std::vector<bool> busy;
    for (const auto* other : alive) busy.push_back(BenchBusy(other->launch.argv.back()));
    return BenchMixSpeed(BenchBusy(a.launch.argv.back()), busy);
  };
  runner.cores = 2;
  std::vector<SweepEvent> events;
  SweepOptions o = Options(dir, runner, &events);
  o.journal_path = dir.File(name + ".journal");
  o.log_dir = dir.File(name + ".logs");
  o.packing.max_per_device = 8;
  o.packing_record = record;
  auto result = RunSweep(Runs(16), o);
  EXPECT_TRUE(result) << result.error().message;
  if (!result) return 0;
  EXPECT_EQ(result->counts.done, 16);
  *trace = "runs:";
  for (const auto& a : runner.started())
    *trace += fmt::format(" {}:{:.2f}-{:.2f}", RunOf(a->launch), a->start_t - runner.started()[0]->start_t,
                          a->end_t - runner.started()[0]->start_t);
  for (const SweepEvent& e : events) *trace += fmt::format("\n  {:.2f} {}", e.elapsed_s, e.text);
  return result->wall_s;
}

// The bench's 16 short runs in milliseconds. The model's first sweep reads as the real bench's (docs/benchmarks.md,
// issue 44: 1.24-1.32 the best fixed -j): 1.32 here, 11.4 s against -j8's 8.6 s, its first run ending before its
// second was judged. The 15% is met from the packing record: the second sweep starts at the degree the first
// proved.
TEST(SweepRules, SixteenShortRunsOfTheBenchsMixFinishNearTheBestFixedCountFromTheRecord) {
  TempDir dir;
  double best = 1e9;
  for (int k : {2, 4, 8}) best = std::min(best, BenchFixedCount(16, k));
  std::string first_trace, second_trace;
  const double first = BenchMixSweep(dir, "first", dir.File("cache/packing.json"), &first_trace);
  const double second = BenchMixSweep(dir, "second", dir.File("cache/packing.json"), &second_trace);
  EXPECT_LE(first, 1.4 * best) << "best fixed count " << best << " s; " << first_trace;
  EXPECT_LE(second, 1.15 * best) << "best fixed count " << best << " s; " << second_trace;
}

// One GPU of 80 GiB at the GpuBackend seam, where NVML would be: this machine has none.
class OneGpu : public telemetry::GpuBackend {
 public:
  unsigned DeviceCount() const override { return 1; }
  std::vector<telemetry::GpuSample> Sample(const std::vector<unsigned>&) override {
    telemetry::GpuSample g;
    g.memory_total_bytes = 80ull << 30;
    return {g};
  }
  std::string Description() const override { return "one GPU"; }
};

// Runs whose start-up (10 s: Python, torch, a CUDA context) outlasts their training (8 s alone), as on the H200 in
// docs/benchmarks.md: a newcomer admitted once its neighbour is measured starts training as that neighbour ends, so
// every gain check is cut short, and the GPU held two runs at most, one of them starting up (1.71x the best fixed k
// there). Training runs share the device (d of them train at d^0.2 together: 1.52x
// at 8); runs still starting up load it not at all. Eight at once from the start end at 52 s; one after another,
// at 144 s. With successors started a start-up ahead of each run's end (packing.h rule 11), and degrees read from
// the runs' own progress on the GPU too (rule 10, counting the runs training), the sweep took 69.6 s.
struct StartUpSweep {
  double wall_s = 0;
  double second_start_s = 0;  // when the second run started
  int progress = 0;           // degrees proven from the device's own progress
  std::string trace;
};
StartUpSweep SweepOfLongStartUps(bool start_ahead, double warmup_s = 2, double window_s = 2) {
  TempDir dir;
  ScriptedRunner runner([](const Launch&, int) {
    AttemptScript s;
    s.hello_at_s = 0.5;  // the automatic instrumentation: steps will come
    s.steps_from_s = 10;
    s.rate = 100;
    s.every_s = 0.1;
    s.work_samples = 800;
    return s;
  });
  runner.speed_by_training = true;
  runner.speed = [](int live) { return live <= 1 ? 1.0 : std::pow(live, 0.2) / live; };
  runner.cores = 16;
  runner.gpu_bytes = 1ull << 30;
  OneGpu gpu;
  std::vector<SweepEvent> events;
  SweepOptions o = Options(dir, runner, &events);
  o.gpu = &gpu;
  o.packing.max_per_device = 8;
  o.packing.start_ahead = start_ahead;
  o.warmup_s = warmup_s;
  o.window_s = window_s;
  auto result = RunSweep(Runs(8), o);
  EXPECT_TRUE(result) << result.error().message;
  if (!result) return {};
  EXPECT_EQ(result->counts.done, 8);
  EXPECT_EQ(runner.started().size(), 8u) << "every run once";
  StartUpSweep out;
  out.wall_s = result->wall_s;
  if (runner.started().size() > 1) out.second_start_s = runner.started()[1]->start_t - runner.started()[0]->start_t;
  for (const SweepEvent& e : events) {
    out.progress += e.text.find("own progress") != std::string::npos;
    out.trace += fmt::format("\n  {:.2f} {}", e.elapsed_s, e.text);
  }
  return out;
}

// Rule 12 then starts the second run's start-up while the first is measured, not after: at 11.2 s rather than 14.2 s
// with the 2-s warm-up and window of the H200 sweep (69.6 s -> 68.5 s), at 12.7 s rather than 18.1 s with the GPU's
// default 5-s warm-up and 3-s window, where the first run ended before it could be measured (83.6 s -> 78.3 s).
TEST(SweepRules, RunsWhoseStartUpOutlastsTheirTrainingStartAheadOfTheirPredecessorsEnd) {
  const StartUpSweep before = SweepOfLongStartUps(false), ahead = SweepOfLongStartUps(true);
  EXPECT_GE(before.progress, 1) << "a degree proven from the device's own progress";
  // Without successors started ahead (rule 11) the sweep took 82.8 s; without rule 10 on the GPU as well, 117 s.
  EXPECT_LE(before.wall_s, 75) << before.trace;
  EXPECT_LT(ahead.second_start_s, before.second_start_s - 2) << ahead.trace;
  EXPECT_LT(ahead.wall_s, before.wall_s) << ahead.trace;
  const StartUpSweep slow_before = SweepOfLongStartUps(false, 5, 3), slow_ahead = SweepOfLongStartUps(true, 5, 3);
  EXPECT_LT(slow_ahead.second_start_s, slow_before.second_start_s - 4) << slow_ahead.trace;
  EXPECT_LT(slow_ahead.wall_s, 0.97 * slow_before.wall_s) << slow_ahead.trace;
}

// What a sweep settled on is recorded for the machine and the command; the next sweep of the same command starts at
// it (one run short of a degree it held) at once and checks only one more step, and ends sooner.
TEST(SweepRules, ASecondSweepStartsAtTheDegreeTheFirstSettledOn) {
  TempDir dir;
  auto sweep = [&](const std::string& name, std::vector<double>* starts) {
    ScriptedRunner runner([](const Launch&, int) {
      AttemptScript s;
      s.rate = 100;
      s.work_samples = 600;
      return s;
    });
    // Up to 3 runs nobody slows; 4 each run at 80% (+60% from 2, +7% from 3); 5 at 55% (-14% from 4).
    runner.speed = [](int live) { return live <= 3 ? 1.0 : live == 4 ? 0.8 : 0.55; };
    SweepOptions o = Options(dir, runner);
    o.journal_path = dir.File(name + ".journal");
    o.log_dir = dir.File(name + ".logs");
    o.packing.max_per_device = 6;
    o.packing_record = dir.File("cache/packing.json");
    auto result = RunSweep(Runs(12), o);
    EXPECT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->counts.done, 12);
    for (const auto& a : runner.started()) starts->push_back(a->start_t - runner.started()[0]->start_t);
    return result->wall_s;
  };
  std::vector<double> first_starts, second_starts;
  const double first = sweep("first", &first_starts);
  const double second = sweep("second", &second_starts);
  ASSERT_GE(second_starts.size(), 5u);
  // The first sweep ramped one check at a time, then in bursts: 2, 4, and 6, whose check read +1.7% a run but up to
  // +12% within its windows' step error: undecided, on trial, never decided before the sweep ended. It recorded 4
  // proven; the second started four at once, checked the fifth (-13%: poor) and held 4.
  EXPECT_GT(first_starts[2], 1.0);
  EXPECT_EQ(second_starts[1], 0);
  EXPECT_EQ(second_starts[3], 0);
  EXPECT_GT(second_starts[4], 0.5) << "the fifth is checked (a growth step once the four are rated), not assumed";
  EXPECT_LT(second, first);
  std::string problem;
  const DegreeRecord record = DegreeRecord::Load(dir.File("cache/packing.json"), &problem);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(record.size(), 1u);
}

}  // namespace
}  // namespace sat::sweep
