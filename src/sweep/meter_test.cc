#include "sweep/meter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace sat::sweep {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr char kRun[] = "run-1";

MeterOptions Options() {
  MeterOptions o;
  o.warmup_s = 2;
  o.window_s = 1;
  o.max_wait_s = 10;
  o.startup_limit_s = 30;
  return o;
}

TreeReading Reading(double t, double cpu, uint64_t rss, std::optional<uint64_t> gpu = std::nullopt) {
  return TreeReading{t, cpu, rss, gpu};
}

// A message as the helper sends it, through the real parser.
measure::HelperMessage Parse(const nlohmann::json& j) {
  auto m = measure::ParseHelperMessage(j.dump());
  EXPECT_TRUE(m) << m.error().message;
  return m.ok() ? *m : measure::HelperMessage{};
}

// The automatic layer's hello, sent when it patched torch.
measure::HelperMessage AutoHello(double t, int64_t pid = 7) {
  return Parse({{"v", 1}, {"type", "hello"}, {"run", kRun}, {"pid", pid}, {"t", t}, {"mode", "train"},
                {"python", "3.11.2"}, {"torch", "1.13.0"}, {"device", "cpu"}, {"auto", true}});
}

struct Counters {
  int64_t steps = 0;
  double samples = 0;
  double excluded_s = 0;  // sent only when positive, as a helper without the automatic layer does
  int64_t pid = 7;
  std::optional<int64_t> reserved;
};
measure::HelperMessage Progress(double t, const Counters& c, const char* run = kRun) {
  nlohmann::json j = {{"v", 1},     {"type", "progress"}, {"run", run},       {"pid", c.pid},
                      {"t", t},     {"steps", c.steps},   {"samples", c.samples}, {"wait_s", 0.0},
                      {"step_s", 0.0}};
  if (c.excluded_s > 0) j["excluded_s"] = c.excluded_s;
  if (c.reserved) j["mem"] = {{"allocated", *c.reserved / 2}, {"reserved", *c.reserved}, {"peak", *c.reserved / 2}};
  return Parse(j);
}

// A process training from `from` to `to` at `steps_per_s` steps of `batch` samples, reporting every 0.25 s;
// `steps_at_from` steps are done at `from`.
void Train(RunMeter& m, double from, double to, double steps_per_s, int batch, int64_t pid = 7,
           int64_t steps_at_from = 1) {
  for (double t = from; t <= to + 1e-9; t += 0.25) {
    const auto steps = steps_at_from + static_cast<int64_t>(std::llround((t - from) * steps_per_s));
    m.Add(Progress(
        t, {.steps = steps, .samples = static_cast<double>(steps * batch), .pid = pid, .reserved = {}}));
  }
}

TEST(RunMeter, ARunThatNeverReportsIsJudgedByItsCpuFromItsStart) {
  RunMeter m(100, /*on_gpu=*/false, Options(), kRun);
  for (double t = 100.5; t <= 104; t += 0.5) m.AddTree(Reading(t, 90, 200 * kMiB));
  EXPECT_FALSE(m.Measured(102.9));
  EXPECT_TRUE(m.Measured(103.0));
  EXPECT_EQ(m.footprint().mem_bytes, 200 * kMiB);
  EXPECT_DOUBLE_EQ(m.footprint().cpu_pct, 90);
  const WindowRates r = m.Rates(102, 104);
  EXPECT_FALSE(r.reports_steps);
  EXPECT_FALSE(r.samples_per_s);
  EXPECT_DOUBLE_EQ(r.cpu_pct.value(), 90);
}

TEST(RunMeter, AStartUpAtHighCpuIsNotJudgedAndTrainingIsJudgedBySamples) {
  // Five seconds of data preparation at four busy cores, then training at 1.5 cores: 40 steps/s of 32 samples.
  RunMeter m(100, false, Options(), kRun);
  m.Add(AutoHello(100.8));
  for (double t = 100.5; t < 105; t += 0.5) m.AddTree(Reading(t, 400, 300 * kMiB));
  EXPECT_FALSE(m.Measured(103.5)) << "a run without steps would be measured now; this one announced them";
  EXPECT_FALSE(m.Measured(104.9));
  Train(m, 105, 109, 40, 32);
  for (double t = 105; t <= 109; t += 0.5) m.AddTree(Reading(t, 150, 300 * kMiB));
  EXPECT_FALSE(m.Measured(107.9)) << "warm-up and window count from the first training step";
  EXPECT_TRUE(m.Measured(108));

  const WindowRates startup = m.Rates(102, 104.5);
  EXPECT_TRUE(startup.reports_steps) << "its CPU use is no signal";
  EXPECT_FALSE(startup.samples_per_s) << "no training in the start-up";
  const WindowRates training = m.Rates(107, 109);
  ASSERT_TRUE(training.samples_per_s);
  EXPECT_NEAR(*training.samples_per_s, 40 * 32, 1e-6);
  EXPECT_DOUBLE_EQ(m.footprint().cpu_pct, 150) << "the steady CPU restarts with training";
  EXPECT_NEAR(m.Summary().throughput_samples_per_s.value(), 40 * 32, 1e-6);
}

TEST(RunMeter, ProcessStatesAndWorkersAreMeanOverTheSteadyReadings) {
  // Start-up: one process, never in 'D'. Training: two workers, one of the three processes in 'D' at every other
  // reading. A reading without a CPU figure (the tree gone) counts for nothing.
  RunMeter m(100, false, Options(), kRun);
  EXPECT_FALSE(m.blocked().has_value());
  m.Add(AutoHello(100.8));
  for (double t = 100.5; t < 105; t += 0.5) m.AddTree(TreeReading{t, 100.0, 300 * kMiB, std::nullopt, 0, 0});
  EXPECT_DOUBLE_EQ(m.blocked().value(), 0) << "before training, every reading";
  Train(m, 105, 109, 40, 32);
  for (int i = 0; i <= 8; ++i) {
    m.AddTree(TreeReading{105 + i * 0.5, 120.0, 300 * kMiB, std::nullopt, static_cast<unsigned>(i % 2), 2});
  }
  m.AddTree(TreeReading{109.2, std::nullopt, std::nullopt, std::nullopt, 3, 0});
  // Steady from 107 (two seconds of warm-up after the first step): readings 107 .. 109, two of the five with one in 'D'.
  EXPECT_DOUBLE_EQ(m.blocked().value(), 2.0 / 5);
  EXPECT_DOUBLE_EQ(m.workers().value(), 2);
}

TEST(RunMeter, ReportsWithoutStepsAreStartUpToo) {
  RunMeter m(100, false, Options(), kRun);
  m.Add(Progress(100.5, {}));
  m.Add(Progress(104, {}));
  EXPECT_FALSE(m.Measured(104));
  EXPECT_FALSE(m.stepping());
  // The interval from the last start-up report to the first step holds no training: a rate that included it
  // would be far below 320 samples/s.
  Train(m, 105, 108, 10, 32);
  EXPECT_TRUE(m.stepping());
  EXPECT_NEAR(m.Rates(104.5, 108).samples_per_s.value(), 320, 1e-6);
  EXPECT_NEAR(m.Summary().throughput_samples_per_s.value(), 320, 1e-6);
}

TEST(RunMeter, ARunThatAnnouncesStepsButNeverTrainsIsMeasuredAtTheStartUpLimit) {
  RunMeter m(100, false, Options(), kRun);
  m.Add(AutoHello(101));
  for (double t = 100.5; t <= 131; t += 0.5) m.AddTree(Reading(t, 100, 200 * kMiB));
  EXPECT_FALSE(m.Measured(129.9));
  EXPECT_TRUE(m.Measured(130));
  EXPECT_FALSE(m.Rates(128, 130).reports_steps) << "taken for a run without steps: CPU judges it";
}

TEST(RunMeter, TimeInOtherLoadersIsNotTrainingTime) {
  // 10 steps/s of 32 samples; between t = 104 and 106 the process runs a validation pass and reports it as
  // excluded_s once it trains again.
  RunMeter m(100, false, Options(), kRun);
  Train(m, 101, 104, 10, 32);
  const int64_t steps = 31;
  m.Add(Progress(106, {.steps = steps, .samples = steps * 32.0, .excluded_s = 2.0, .reserved = {}}));
  for (double t = 106.25; t <= 109; t += 0.25) {
    const auto s = steps + static_cast<int64_t>(std::llround((t - 106) * 10));
    m.Add(Progress(t, {.steps = s, .samples = s * 32.0, .excluded_s = 2.0, .reserved = {}}));
  }
  // The aggregator counts at least a millisecond of any report interval as training: within 0.1 samples/s.
  const WindowRates r = m.Rates(102, 108);
  ASSERT_TRUE(r.samples_per_s);
  EXPECT_NEAR(*r.samples_per_s, 320, 0.1) << "not 320 x 4 / 6";
  EXPECT_FALSE(m.Rates(104, 106).samples_per_s) << "no training in the window";
  EXPECT_NEAR(m.Summary().throughput_samples_per_s.value(), 320, 0.1);
}

// Rated: two half windows of training at one rate, each of enough steps; the window's steps say how finely it
// resolves the rate (the slowest process's count).
TEST(RunMeter, ARunIsRatedOnceTwoHalfWindowsAgreeAndItsWindowsCountSteps) {
  RunMeter m(100, /*on_gpu=*/false, Options(), kRun);  // window 1 s: half windows of 0.5 s
  m.Add(AutoHello(100.5));
  EXPECT_FALSE(m.Rated(103)) << "no step yet";
  Train(m, 102, 104, 20, 8);
  Train(m, 102, 104, 10, 8, /*pid=*/8);
  EXPECT_FALSE(m.Rated(102.75)) << "a window after the first step at the soonest";
  EXPECT_TRUE(m.Rated(103));
  EXPECT_FALSE(m.Measured(103)) << "measured only after warm-up and window";
  const WindowRates r = m.Rates(103, 104);
  EXPECT_NEAR(r.samples_per_s.value(), 30 * 8, 1e-6);
  EXPECT_NEAR(r.steps.value(), 10, 1e-6) << "the slower process's steps";

  // A warm-up: 6 steps/s for a second, then 12. Not rated while the halves disagree, rated once both are steady.
  RunMeter warm(100, false, Options(), kRun);
  Train(warm, 102, 103, 6, 8);
  Train(warm, 103.25, 105, 12, 8, 7, 1 + 6 + 3);
  EXPECT_FALSE(warm.Rated(103.5)) << "0.5 s at 6 steps/s against 0.5 s at 12";
  EXPECT_TRUE(warm.Rated(104.25));

  // Coarse: 4 steps a second, 2 a half window: never rated (only measured).
  RunMeter coarse(100, false, Options(), kRun);
  Train(coarse, 102, 105, 4, 8);
  EXPECT_FALSE(coarse.Rated(105));

  RunMeter quiet(100, false, Options(), kRun);
  for (double t = 100.5; t <= 104; t += 0.5) quiet.AddTree(Reading(t, 90, 200 * kMiB));
  EXPECT_FALSE(quiet.Rated(104)) << "a run without steps is measured, never rated";
}

TEST(RunMeter, TheRatesOfAllProcessesAdd) {
  RunMeter m(100, false, Options(), kRun);
  Train(m, 101, 106, 10, 32, /*pid=*/7);
  Train(m, 101, 106, 5, 32, /*pid=*/8);
  m.Add(Progress(104, {.steps = 1, .samples = 1, .pid = 9, .reserved = {}}, "another-run"));  // ignored
  EXPECT_NEAR(m.Rates(104, 106).samples_per_s.value(), 15 * 32, 1e-6);
  EXPECT_EQ(m.totals().processes, 2);
}

TEST(RunMeter, GrowingMemoryIsNotMeasuredUntilItSettlesOrTheWaitRunsOut) {
  // RSS doubles every second: never flat.
  auto doubling = [](double t) { return static_cast<uint64_t>(std::pow(2.0, t - 100)) * kMiB; };
  RunMeter m(100, false, Options(), kRun);
  for (double t = 100.5; t <= 114; t += 0.5) m.AddTree(Reading(t, 90, doubling(t)));
  EXPECT_FALSE(m.Measured(106));
  EXPECT_FALSE(m.Measured(112.9));
  EXPECT_TRUE(m.Measured(113)) << "warmup + window + max_wait";
}

TEST(RunMeter, AGpuRunIsMeasuredOnlyOnceItStepsOrHoldsGpuMemory) {
  RunMeter m(100, /*on_gpu=*/true, Options(), kRun);
  for (double t = 100.5; t <= 105; t += 0.5) m.AddTree(Reading(t, 100, 2000 * kMiB, 0));
  EXPECT_FALSE(m.Measured(105));
  for (double t = 105.5; t <= 107; t += 0.5) m.AddTree(Reading(t, 100, 2000 * kMiB, 3000 * kMiB));
  EXPECT_TRUE(m.Measured(107));
  m.Add(Progress(107, {1, 32, 0, 7, 3500 * kMiB}));
  EXPECT_EQ(m.footprint().mem_bytes, 3500 * kMiB) << "the larger of NVML and the helper";
}

TEST(RunMeter, SummaryUsesTheSteadyPart) {
  RunMeter m(100, false, Options(), kRun);
  // 100 samples/s during the two warm-up seconds, then 1000 samples/s.
  double samples = 0, reported = 0;
  int64_t steps = 0;
  for (double t = 101; t <= 110 + 1e-9; t += 0.5) {
    m.Add(Progress(t, {.steps = ++steps, .samples = samples, .reserved = {}}));
    reported = samples;
    samples += t < 103 ? 50 : 500;
  }
  m.AddTree(Reading(101, 50, 100 * kMiB));
  m.AddTree(Reading(104, 100, 300 * kMiB));
  const Measurements s = m.Summary();
  ASSERT_TRUE(s.throughput_samples_per_s);
  EXPECT_NEAR(*s.throughput_samples_per_s, 1000, 1e-6);
  EXPECT_EQ(s.rss_bytes, 300 * kMiB);
  EXPECT_DOUBLE_EQ(s.cpu_pct.value(), 100);
  EXPECT_FALSE(s.peak_gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(s.samples.value(), reported) << "every sample trained, warm-up included";
  EXPECT_FALSE(RunMeter(100, false, Options(), kRun).Summary().samples) << "nothing reported";
}

// What a run trained at any moment (packing rule 10): each process's counts at its latest report, carried on at its
// last rate for at most one report interval; a run with two processes counts each one's steps as half a run's.
TEST(RunMeter, TrainedAtCarriesEachProcessOnForOneReportIntervalAtMost) {
  RunMeter m(100, false, Options(), kRun);
  Train(m, 101, 102, 20, 8);     // from its first report: 20 steps, 160 samples, up to 102
  Train(m, 101, 102, 20, 8, 9);  // a second process, alike
  const RunMeter::Trained at_report = m.TrainedAt(102, true);
  EXPECT_DOUBLE_EQ(at_report.samples, 320);
  EXPECT_DOUBLE_EQ(at_report.steps, 20);
  const RunMeter::Trained ahead = m.TrainedAt(102.1, true);
  EXPECT_NEAR(ahead.samples, 320 + 2 * 16, 1e-9);  // 0.1 s at 160 samples/s each
  EXPECT_NEAR(m.TrainedAt(105, true).samples, 320 + 2 * 40, 1e-9) << "at most the 0.25 s between its reports";
  EXPECT_DOUBLE_EQ(m.TrainedAt(105, false).samples, 320) << "an ended run: as of its last report";
}

}  // namespace
}  // namespace sat::sweep
