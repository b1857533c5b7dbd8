#include "tune/flops.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tune/console.h"
#include "tune/html_report.h"
#include "tune/results.h"
#include "tune/test_model.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;

measure::FlopsInfo Count(double per_sample, std::string dtype) {
  measure::FlopsInfo c;
  c.per_sample = per_sample;
  c.per_step = per_sample * 64;
  c.samples = 64;
  c.method = "flop_counter";
  c.dtype = std::move(dtype);
  c.device = "cuda";
  return c;
}

// The model's tune on an H100, every trial with a count of 1 GFLOP per sample in bf16.
TuneResult OnAnH100() {
  TuneResult r = testing::ModelResult();
  r.machine.gpu_index = 0;
  r.machine.gpu_name = "NVIDIA H100 80GB HBM3";
  for (Trial& t : r.search.trials) t.flops = Count(1e9, "bf16");
  return r;
}

TEST(TuneFlops, TrialsGetFlopsPerSecondAndMfu) {
  TuneResult r = OnAnH100();
  const Trial& t = r.search.trials.front();
  core::FlopsReading reading = TrialFlops(t, r.machine);
  ASSERT_TRUE(reading.flops_per_s && reading.mfu);
  EXPECT_DOUBLE_EQ(*reading.flops_per_s, 1e9 * t.samples_per_s);
  EXPECT_DOUBLE_EQ(*reading.mfu, 1e9 * t.samples_per_s / 989.5e12);
  // Without the GPU the same trial has FLOP/s only.
  r.machine.gpu_index = -1;
  EXPECT_FALSE(TrialFlops(t, r.machine).mfu);
}

TEST(TuneFlops, TheReportAndResultsCarryTheRecommendationsFlops) {
  TuneResult r = OnAnH100();
  EXPECT_THAT(FlopsLine(r), HasSubstr("FLOPs: 1.00 GFLOP per sample"));
  EXPECT_THAT(FlopsLine(r), HasSubstr("; recommended "));
  EXPECT_THAT(FlopsLine(r), HasSubstr("of the H100 SXM bf16 dense peak (990 TFLOP/s)"));
  EXPECT_THAT(ConsoleReport(r), HasSubstr("FLOPs: "));
  EXPECT_THAT(HtmlReport(r), HasSubstr("<p>FLOPs: 1.00 GFLOP per sample"));
  nlohmann::json j = ResultsJson(r);
  EXPECT_EQ(j["flops"]["count"]["method"], "flop_counter");
  EXPECT_GT(j["flops"]["recommended"]["mfu"].get<double>(), 0);
  EXPECT_EQ(j["flops"]["baseline"]["gpu_model"], "H100 SXM");
  EXPECT_GT(j["trials"][0]["flops_rate"]["flops_per_s"].get<double>(), 0);
  EXPECT_TRUE(j["trace"].is_null());
  // A trial's count survives the cache's round trip.
  Result<Trial> back = TrialFromJson(TrialToJson(r.search.trials.front()));
  ASSERT_TRUE(back);
  ASSERT_TRUE(back->flops);
  EXPECT_DOUBLE_EQ(back->flops->per_sample, 1e9);
  EXPECT_EQ(back->flops->dtype, "bf16");
}

// The GPU's energy per sample of the recommendation and the baseline: in the report, report.html and results.json,
// and through the cache; nothing without a reading.
TEST(TuneEnergy, TheRecommendationAndTheBaselineCarryTheirEnergy) {
  TuneResult r = OnAnH100();
  for (Trial& t : r.search.trials) {
    t.watts = 400;
    t.joules_per_sample = 400 / t.samples_per_s;
    t.energy_method = "counter";
  }
  const Trial* rec = r.search.FindTrial(r.search.confirm_trial);
  const Trial* base = r.search.FindTrial(r.search.baseline_trial);
  ASSERT_TRUE(rec && base);
  std::string line = EnergyLine(r);
  EXPECT_THAT(line, HasSubstr("Energy, from NVML's energy counter (the GPU only): recommended "));
  EXPECT_THAT(line, HasSubstr(fmt::format("recommended {} J per sample", FormatNumber(400 / rec->samples_per_s))));
  EXPECT_THAT(line, HasSubstr("at 400 W; baseline "));
  EXPECT_THAT(ConsoleReport(r), HasSubstr(line));
  EXPECT_THAT(HtmlReport(r), HasSubstr("Energy, from NVML"));
  nlohmann::json j = ResultsJson(r);
  EXPECT_DOUBLE_EQ(j["energy"]["recommended"]["joules_per_sample"].get<double>(), 400 / rec->samples_per_s);
  EXPECT_DOUBLE_EQ(j["energy"]["baseline"]["samples_per_kwh"].get<double>(), 3.6e6 / (400 / base->samples_per_s));
  Result<Trial> back = TrialFromJson(TrialToJson(*rec));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->joules_per_sample, rec->joules_per_sample);
  EXPECT_EQ(back->energy_method, "counter");
  // No reading: no line, nulls.
  TuneResult plain = OnAnH100();
  EXPECT_EQ(EnergyLine(plain), "");
  EXPECT_TRUE(ResultsJson(plain)["energy"]["recommended"].is_null());
}

// cost per million samples = price x GPUs / 3600 / samples/s x 1e6, for the recommendation and the baseline.
TEST(TuneCost, APriceGivesTheCostPerMillionSamples) {
  TuneResult r = OnAnH100();
  EXPECT_EQ(CostLine(r), "");
  EXPECT_TRUE(CostJson(r).is_null());
  r.price_per_gpu_hour = 2.5;
  const Trial* rec = r.search.FindTrial(r.search.confirm_trial);
  ASSERT_TRUE(rec);
  const double per_million = 2.5 / 3600 / rec->samples_per_s * 1e6;
  EXPECT_THAT(CostLine(r), HasSubstr(fmt::format("Cost at 2.50 per GPU-hour: recommended {} per million samples",
                                                 FormatNumber(per_million))));
  EXPECT_THAT(ConsoleReport(r), HasSubstr("Cost at 2.50 per GPU-hour"));
  EXPECT_DOUBLE_EQ(ResultsJson(r)["cost"]["recommended"]["per_million_samples"].get<double>(), per_million);
  // A distributed job pays for every rank's GPU.
  for (Trial& t : r.search.trials) t.world_size = 2;
  EXPECT_DOUBLE_EQ(CostJson(r)["recommended"]["per_million_samples"].get<double>(), 2 * per_million);
  EXPECT_THAT(CostLine(r), HasSubstr("(x 2 GPUs)"));
}

// --what-if in tune's report: the recommendation's confirmation, the compute measurement of its batch and the loader
// trial of its workers, carried to another GPU by the dense-peak ratio.
TEST(TuneWhatIf, TheRecommendationOnOtherHardware) {
  TuneResult r = OnAnH100();
  r.machine.cpu_count = 16;
  EXPECT_EQ(WhatIfSection(r), "");  // not asked for
  auto targets = core::ParseWhatIf("a100");
  ASSERT_TRUE(targets);
  r.what_if = *targets;
  const SearchOutcome& s = r.search;
  core::WhatIfInputs in = TuneWhatIfInputs(r);
  EXPECT_DOUBLE_EQ(in.full, s.FindTrial(s.confirm_trial)->samples_per_s);
  const Trial* compute = s.FindTrial(s.recommended_batch_trial ? s.recommended_batch_trial : s.compute_ceiling_trial);
  ASSERT_TRUE(compute && in.compute);
  EXPECT_DOUBLE_EQ(*in.compute, compute->samples_per_s);
  ASSERT_TRUE(in.loader.has_value());
  EXPECT_EQ(in.precision, core::Precision::kBf16);
  EXPECT_TRUE(in.on_gpu);
  std::string text = WhatIfSection(r);
  EXPECT_THAT(text, HasSubstr("what-if (estimates from what was measured, not measurements):"));
  EXPECT_THAT(text, HasSubstr("  A100: ~"));
  EXPECT_THAT(ConsoleReport(r), HasSubstr("  A100: ~"));
}

TEST(TuneFlops, NothingCountedSaysNothing) {
  TuneResult r = testing::ModelResult();
  EXPECT_EQ(FlopsLine(r), "");
  EXPECT_TRUE(FlopsJson(r).is_null());
  EXPECT_THAT(ConsoleReport(r), ::testing::Not(HasSubstr("FLOPs:")));
}

}  // namespace
}  // namespace sat::tune
