#include "sweep/meter.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sat::sweep {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

MeterOptions Options() {
  MeterOptions o;
  o.warmup_s = 2;
  o.window_s = 1;
  o.max_wait_s = 10;
  return o;
}

TreeReading Reading(double t, double cpu, uint64_t rss, std::optional<uint64_t> gpu = std::nullopt) {
  return TreeReading{t, cpu, rss, gpu};
}

TEST(RunMeter, MeasuredAfterWarmupAndAWindowWithAFlatFootprint) {
  RunMeter m(100, /*on_gpu=*/false, Options());
  for (double t = 100.5; t <= 104; t += 0.5) m.AddTree(Reading(t, 90, 200 * kMiB));
  EXPECT_FALSE(m.Measured(102.9));
  EXPECT_TRUE(m.Measured(103.0));
  EXPECT_EQ(m.footprint().mem_bytes, 200 * kMiB);
  EXPECT_DOUBLE_EQ(m.footprint().cpu_pct, 90);
}

TEST(RunMeter, TheFirstProgressReportStartsTheWarmup) {
  RunMeter m(100, false, Options());
  m.AddProgress(105, 0);  // five seconds of imports before the first batch
  for (double t = 100.5; t <= 109; t += 0.5) m.AddTree(Reading(t, 90, 200 * kMiB));
  EXPECT_FALSE(m.Measured(107.9));
  EXPECT_TRUE(m.Measured(108));
}

TEST(RunMeter, GrowingMemoryIsNotMeasuredUntilItSettlesOrTheWaitRunsOut) {
  // RSS doubles every second: never flat.
  auto doubling = [](double t) { return static_cast<uint64_t>(std::pow(2.0, t - 100)) * kMiB; };
  RunMeter m(100, false, Options());
  for (double t = 100.5; t <= 114; t += 0.5) m.AddTree(Reading(t, 90, doubling(t)));
  EXPECT_FALSE(m.Measured(106));
  EXPECT_FALSE(m.Measured(112.9));
  EXPECT_TRUE(m.Measured(113)) << "warmup + window + max_wait";
}

TEST(RunMeter, AGpuRunIsMeasuredOnlyOnceItReportsOrHoldsGpuMemory) {
  RunMeter m(100, /*on_gpu=*/true, Options());
  for (double t = 100.5; t <= 105; t += 0.5) m.AddTree(Reading(t, 100, 2000 * kMiB, 0));
  EXPECT_FALSE(m.Measured(105));
  for (double t = 105.5; t <= 107; t += 0.5) m.AddTree(Reading(t, 100, 2000 * kMiB, 3000 * kMiB));
  EXPECT_TRUE(m.Measured(107));
  m.AddHelperMemory(3500 * kMiB);
  EXPECT_EQ(m.footprint().mem_bytes, 3500 * kMiB) << "the larger of NVML and the helper";
}

TEST(RunMeter, RatesOverAWindow) {
  RunMeter m(100, false, Options());
  for (int i = 0; i <= 40; ++i) m.AddProgress(101 + 0.25 * i, 64.0 * 10 * i);  // 2560 samples/s
  m.AddTree(Reading(105, 80, kMiB));
  m.AddTree(Reading(106, 100, kMiB));
  const WindowRates r = m.Rates(104.5, 106.5);
  ASSERT_TRUE(r.samples_per_s);
  EXPECT_NEAR(*r.samples_per_s, 2560, 1e-6);
  ASSERT_TRUE(r.cpu_pct);
  EXPECT_DOUBLE_EQ(*r.cpu_pct, 90);
  EXPECT_FALSE(m.Rates(120, 125).samples_per_s) << "no reports in the window";
  EXPECT_FALSE(m.Rates(120, 125).cpu_pct);
}

TEST(RunMeter, SummaryUsesTheSteadyPart) {
  RunMeter m(100, false, Options());
  // 100 samples/s during the two warm-up seconds, then 1000 samples/s.
  double samples = 0;
  for (double t = 101; t <= 110 + 1e-9; t += 0.5) {
    m.AddProgress(t, samples);
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
}

}  // namespace
}  // namespace sat::sweep
