#include "tune/trial.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

Trial Sample() {
  Trial t;
  t.id = 4;
  t.request = {core::StageKind::kCompute, {{"batch_size", 128}, {"amp", "bf16"}}, "batch", 0, {}};
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
  t.settled = true;
  t.observations = 70;
  t.steady_steps = 52;
  t.auto_seen = true;
  t.knobs_auto = {"batch_size"};
  t.knob_errors = {{"prefetch_factor", "no workers to prefetch"}};
  t.loader_key = "train.py:57#0";
  t.loader_site = "train.py:57";
  return t;
}

TEST(Trial, RoundTripsThroughJson) {
  Trial t = Sample();
  auto back = TrialFromJson(TrialToJson(t));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(TrialToJson(*back), TrialToJson(t));
  EXPECT_EQ(back->request.mode, core::StageKind::kCompute);
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
  TrialRequest a{core::StageKind::kFull, {{"workers", 2}}, "full", 0, {}};
  TrialRequest b = a;
  b.step = "confirm";
  EXPECT_TRUE(a.SameMeasurement(b));
  b.repeat = 1;
  EXPECT_FALSE(a.SameMeasurement(b));
  TrialRequest c = a;
  c.mode = core::StageKind::kLoader;
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
  core::StageResult s;
  s.kind = core::StageKind::kFull;
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

TEST(Trial, FromStageMatchesAutomaticKnobsByRole) {
  core::StageResult s;
  s.ran = true;
  s.helper_seen = s.auto_seen = true;
  // The automatic layer's names: "workers" and "amp" stand for the searched num_workers and precision.
  s.knobs_seen = {{"workers", 0}, {"batch_size", 32}, {"amp", "off"}, {"pin_memory", false},
                  {"prefetch_factor", 2}};
  s.knobs_auto = {"workers", "batch_size", "amp", "pin_memory", "prefetch_factor"};
  s.knob_errors = {{"amp", "fp16 needs the script's own GradScaler"}};
  s.loader = measure::LoaderInfo{};
  s.loader->key = "train.py:57#0";
  s.loader->site = "train.py:57";
  s.outcome.exit_class = run::ExitClass::kStopped;
  s.estimate.samples_per_s = 500;
  MachineFacts m{4, false};
  auto resolved = ResolveKnobs({"num_workers=0:8", "precision=off,fp16", "batch_size"}, {"t.py"}, m);
  ASSERT_TRUE(resolved);
  const std::vector<KnobSpec>& knobs = *resolved;
  Trial t = TrialFromStage(s, knobs, 16e9);
  EXPECT_TRUE(t.auto_seen);
  EXPECT_EQ(t.knobs_seen, (KnobValues{{"num_workers", 0}, {"precision", "off"}, {"batch_size", 32}}));
  EXPECT_EQ(t.knobs_auto, (std::set<std::string>{"num_workers", "precision", "batch_size"}));
  EXPECT_EQ(t.knob_errors,
            (std::map<std::string, std::string>{{"precision", "fp16 needs the script's own GradScaler"}}));
  EXPECT_EQ(t.loader_key, "train.py:57#0");
  EXPECT_EQ(t.loader_site, "train.py:57");
  EXPECT_TRUE(Succeeded(t));  // the error concerns a value this trial did not ask for
  t.request.knobs = {{"precision", "fp16"}};
  EXPECT_FALSE(Succeeded(t));
  EXPECT_EQ(KnobNotApplied(t), "precision=fp16 could not be set: fp16 needs the script's own GradScaler");

  // The script's own saturate.knob("num_workers") outranks the automatic layer's report of its loader.
  s.knobs_seen["num_workers"] = 3;
  EXPECT_EQ(TrialFromStage(s, knobs, 16e9).knobs_seen.at("num_workers"), KnobValue(3));
  EXPECT_EQ(TrialFromStage(s, knobs, 16e9).knobs_auto.count("num_workers"), 0u);
  // Names the automatic layer did not send are matched by name only.
  s.knobs_auto.clear();
  s.knobs_seen = {{"workers", 2}};
  EXPECT_TRUE(TrialFromStage(s, knobs, 16e9).knobs_seen.empty());
}

TEST(Trial, FromStageJudgesTheEstimate) {
  core::StageResult s;
  s.outcome.exit_class = run::ExitClass::kStopped;
  s.estimate.samples_per_s = 500;
  s.estimate.ci_low = 400;
  s.estimate.ci_high = 600;
  s.estimate.rel_half_width = 0.2;
  s.estimate.n_batches = 12;
  s.estimate.steady_s = 8;
  s.estimate.observations_used = 40;
  s.observations = 55;
  Trial t = TrialFromStage(s, {}, std::nullopt);
  EXPECT_FALSE(t.converged);
  EXPECT_TRUE(t.settled);  // wider than a target, but steady: it counts, and separates from fewer others
  EXPECT_EQ(t.steady_steps, 40);
  EXPECT_EQ(t.observations, 55);
  s.estimate.drift = true;
  EXPECT_FALSE(TrialFromStage(s, {}, std::nullopt).settled);
  EXPECT_EQ(TrialFromStage(s, {}, std::nullopt).unsettled_why, "still drifting");
  s.estimate.drift = false;
  s.estimate.warmup_at_limit = true;
  EXPECT_FALSE(TrialFromStage(s, {}, std::nullopt).settled);
  EXPECT_EQ(TrialFromStage(s, {}, std::nullopt).unsettled_why, "its warm-up did not end");
  s.estimate.warmup_at_limit = false;
  s.estimate.n_batches = 4;  // too few for a Student t interval to trust
  EXPECT_FALSE(TrialFromStage(s, {}, std::nullopt).settled);
  EXPECT_EQ(TrialFromStage(s, {}, std::nullopt).unsettled_why, "4 batches of steady data");
  // Helper reports: steps from the steady samples at the run's samples per step (500/s x 8 s / 32).
  s.totals.steps = 100;
  s.totals.samples = 3200;
  EXPECT_EQ(TrialFromStage(s, {}, std::nullopt).steady_steps, 125);
}

}  // namespace
}  // namespace sat::tune
