#include "tune/trial.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

Trial Sample() {
  Trial t;
  t.id = 4;
  t.request = {probe::StageKind::kCompute, {{"batch_size", 128}, {"amp", "bf16"}}, "batch", 0};
  t.exit_class = run::ExitClass::kStopped;
  t.detail = "stopped by saturate";
  t.helper_seen = true;
  t.knobs_seen = {{"batch_size", 128}};
  t.samples_per_s = 1234.5;
  t.ci_low = 1200;
  t.ci_high = 1270;
  t.converged = true;
  t.warmup_s = 1.5;
  t.steady_s = 4;
  t.wall_s = 9.25;
  t.series = {{0.5, 600}, {1.5, 1200}};
  t.mem_peak_bytes = 2e9;
  t.mem_total_bytes = 8e9;
  t.mem_is_gpu = true;
  t.gpu_util_pct = 97;
  t.cpu_pct = 110;
  t.rss_peak_bytes = 3e9;
  t.started_unix = 1700000000;
  return t;
}

TEST(Trial, RoundTripsThroughJson) {
  Trial t = Sample();
  auto back = TrialFromJson(TrialToJson(t));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(TrialToJson(*back), TrialToJson(t));
  EXPECT_EQ(back->request.mode, probe::StageKind::kCompute);
  EXPECT_EQ(back->exit_class, run::ExitClass::kStopped);
  EXPECT_EQ(back->series.size(), 2u);
  EXPECT_FALSE(back->cpu_pct_p95.has_value());
  EXPECT_EQ(*back->gpu_util_pct, 97);
}

TEST(Trial, RejectsDamagedJson) {
  auto j = TrialToJson(Sample());
  j["mode"] = "sideways";
  EXPECT_FALSE(TrialFromJson(j));
  j = TrialToJson(Sample());
  j.erase("samples_per_s");
  EXPECT_FALSE(TrialFromJson(j));
  j = TrialToJson(Sample());
  j["exit_class"] = "exploded";
  EXPECT_FALSE(TrialFromJson(j));
}

TEST(Trial, Outcomes) {
  Trial t = Sample();
  EXPECT_TRUE(Succeeded(t));
  EXPECT_FALSE(OutOfMemory(t));
  EXPECT_DOUBLE_EQ(*MemoryShare(t), 0.25);
  EXPECT_FALSE(OverMemoryTarget(t, 0.9));
  EXPECT_TRUE(OverMemoryTarget(t, 0.2));
  t.exit_class = run::ExitClass::kGpuOom;
  EXPECT_FALSE(Succeeded(t));
  EXPECT_TRUE(OutOfMemory(t));
  t = Sample();
  t.samples_per_s = 0;
  EXPECT_FALSE(Succeeded(t));
  t = Sample();
  t.interrupted = true;
  EXPECT_FALSE(Succeeded(t));
  t = Sample();
  t.mem_total_bytes.reset();
  EXPECT_FALSE(OverMemoryTarget(t, 0.0));
}

TEST(Trial, EffectiveKnobPrefersWhatWasSet) {
  Trial t = Sample();
  t.knobs_seen["workers"] = 3;
  EXPECT_EQ(*EffectiveKnob(t, "batch_size"), KnobValue(128));
  EXPECT_EQ(*EffectiveKnob(t, "workers"), KnobValue(3));
  EXPECT_EQ(EffectiveKnob(t, "preload"), nullptr);
}

TEST(Trial, RequestsCompareByMeasurement) {
  TrialRequest a{probe::StageKind::kFull, {{"workers", 2}}, "full", 0};
  TrialRequest b = a;
  b.step = "confirm";
  EXPECT_TRUE(a.SameMeasurement(b));
  b.repeat = 1;
  EXPECT_FALSE(a.SameMeasurement(b));
  TrialRequest c = a;
  c.mode = probe::StageKind::kLoader;
  EXPECT_FALSE(a.SameMeasurement(c));
}

TEST(Trial, ThinsLongSeries) {
  std::vector<measure::RatePoint> s;
  for (int i = 0; i < 1000; ++i) s.push_back({static_cast<double>(i), static_cast<double>(i % 2 ? 10 : 20)});
  auto thin = Thin(s, 100);
  EXPECT_LE(thin.size(), 100u);
  EXPECT_DOUBLE_EQ(thin[0].samples_per_s, 15);
  EXPECT_DOUBLE_EQ(thin[0].t_s, 4.5);
  EXPECT_EQ(Thin(s, 2000).size(), 1000u);
}

TEST(Trial, FromStage) {
  probe::StageResult s;
  s.kind = probe::StageKind::kFull;
  s.ran = true;
  s.helper_seen = true;
  s.knobs_seen = {{"pin_memory", true}, {"batch_size", 64}, {"unknown", 1}};
  s.estimate.samples_per_s = 800;
  s.estimate.ci_low = 780;
  s.estimate.ci_high = 820;
  s.estimate.converged = true;
  s.estimate.warmup_s = 2;
  s.series = {{1, 700}, {2, 800}};
  s.outcome.exit_class = run::ExitClass::kStopped;
  s.telemetry.tree_rss_bytes = telemetry::Summary{10, 1e9, 1e9, 1.1e9, 1.2e9, 0.9e9};
  s.telemetry.tree_cpu_pct = telemetry::Summary{10, 150, 140, 190, 200, 100};
  s.wall_s = 12;
  std::vector<KnobSpec> knobs = DefaultKnobs({4, true});
  Trial t = TrialFromStage(s, knobs, 16e9);
  EXPECT_EQ(t.knobs_seen, (KnobValues{{"pin_memory", "on"}, {"batch_size", 64}}));
  EXPECT_TRUE(Succeeded(t));
  EXPECT_FALSE(t.mem_is_gpu);  // no GPU total seen: the host's memory
  EXPECT_DOUBLE_EQ(*t.mem_peak_bytes, 1.2e9);
  EXPECT_DOUBLE_EQ(*t.mem_total_bytes, 16e9);
  EXPECT_DOUBLE_EQ(*t.cpu_pct, 140);
  EXPECT_DOUBLE_EQ(*t.cpu_pct_p95, 190);
  EXPECT_FALSE(t.gpu_util_pct.has_value());

  s.telemetry.gpu_mem_total_bytes = 80e9;
  s.telemetry.tree_gpu_mem_bytes = telemetry::Summary{10, 40e9, 40e9, 41e9, 42e9, 30e9};
  Trial g = TrialFromStage(s, knobs, 16e9);
  EXPECT_TRUE(g.mem_is_gpu);
  EXPECT_DOUBLE_EQ(*g.mem_peak_bytes, 42e9);
  EXPECT_DOUBLE_EQ(*g.mem_total_bytes, 80e9);
}

}  // namespace
}  // namespace sat::tune
