#include "probe/mfu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/report.h"
#include "probe/test_results.h"
#include "probe/verdict.h"

namespace sat::probe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace results;

constexpr std::string_view kA100 = "NVIDIA A100-SXM4-80GB";

measure::FlopsInfo Count(double per_sample, std::string dtype = "bf16", std::string device = "cuda",
                         bool tf32 = false) {
  measure::FlopsInfo c;
  c.per_sample = per_sample;
  c.samples = 64;
  c.per_step = per_sample * 64;
  c.method = "flop_counter";
  c.dtype = std::move(dtype);
  c.device = std::move(device);
  c.tf32 = tf32;
  return c;
}

TEST(Mfu, AchievedFlopsOverTheDensePeak) {
  // 4.1 GFLOP per sample at 100 samples/s is 410 GFLOP/s; the A100's bf16 dense peak is 312 TFLOP/s.
  FlopsReading r = ReadFlops(Count(4.1e9), 100, kA100);
  ASSERT_TRUE(r.flops_per_s && r.mfu && r.peak_flops_per_s);
  EXPECT_DOUBLE_EQ(*r.flops_per_s, 4.1e11);
  EXPECT_DOUBLE_EQ(*r.peak_flops_per_s, 312e12);
  EXPECT_DOUBLE_EQ(*r.mfu, 4.1e11 / 312e12);
  EXPECT_EQ(r.precision, Precision::kBf16);
  EXPECT_EQ(FlopsText(r), "410 GFLOP/s, MFU 0.1% of the A100 bf16 dense peak (312 TFLOP/s)");
  // fp32 with TF32 allowed is held to the TF32 peak; without it, to the fp32 one.
  EXPECT_DOUBLE_EQ(*ReadFlops(Count(1e9, "fp32", "cuda", true), 1000, kA100).mfu, 1e12 / 156e12);
  EXPECT_DOUBLE_EQ(*ReadFlops(Count(1e9, "fp32", "cuda", false), 1000, kA100).mfu, 1e12 / 19.5e12);
}

TEST(Mfu, OnACpuAchievedFlopsOnly) {
  FlopsReading r = ReadFlops(Count(2e6, "fp32", "cpu"), 500, "");
  ASSERT_TRUE(r.flops_per_s);
  EXPECT_DOUBLE_EQ(*r.flops_per_s, 1e9);
  EXPECT_FALSE(r.mfu);
  EXPECT_EQ(FlopsText(r), "1.00 GFLOP/s (on a CPU: achieved FLOP/s only)");
  EXPECT_EQ(ShortFlopsText(r), "1.00 GFLOP/s");
}

TEST(Mfu, NoMfuWithoutAPeakToCompareWith) {
  EXPECT_THAT(ReadFlops(Count(1e9, "fp32", "cpu"), 10, kA100).no_mfu_why, HasSubstr("ran on the cpu, not the GPU"));
  EXPECT_EQ(ReadFlops(Count(1e9), 10, "NVIDIA GeForce RTX 4090").no_mfu_why,
            "no peak known for NVIDIA GeForce RTX 4090");
  EXPECT_EQ(ReadFlops(Count(1e9), 10, "Tesla V100-SXM2-16GB").no_mfu_why, "the V100 SXM2 has no bf16 units");
  EXPECT_EQ(ReadFlops(Count(1e9, "fp64"), 10, kA100).no_mfu_why, "no peak for fp64 products");
  // Nothing counted, or no rate: no reading at all.
  EXPECT_FALSE(ReadFlops(std::nullopt, 10, kA100).flops_per_s);
  EXPECT_FALSE(ReadFlops(Count(1e9), 0, kA100).flops_per_s);
  EXPECT_EQ(FlopsText(ReadFlops(Count(1e9), 0, kA100)), "");
}

TEST(Mfu, FormatsWithSiPrefixes) {
  EXPECT_EQ(FormatFlopsPerS(1.234e12), "1.23 TFLOP/s");
  EXPECT_EQ(FormatFlopsPerS(5.6e8), "560 MFLOP/s");
  EXPECT_EQ(FormatFlopsPerS(42), "42.0 FLOP/s");
  EXPECT_EQ(FormatFlopsPerS(2.5e15), "2.50 PFLOP/s");
  EXPECT_EQ(CountText(Count(4.1e9)), "4.10 GFLOP per sample (forward + backward, torch FlopCounterMode; bf16 products)");
}

TEST(Mfu, CountRoundTripsThroughJson) {
  measure::FlopsInfo c = Count(3.5e9, "fp32", "cuda", true);
  c.method = "module_hooks";
  std::optional<measure::FlopsInfo> back = FlopsInfoFromJson(FlopsInfoJson(c));
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->per_sample, 3.5e9);
  EXPECT_DOUBLE_EQ(back->per_step, c.per_step);
  EXPECT_EQ(back->method, "module_hooks");
  EXPECT_EQ(back->dtype, "fp32");
  EXPECT_TRUE(back->tf32);
  EXPECT_EQ(back->device, "cuda");
  EXPECT_TRUE(FlopsInfoJson(std::nullopt).is_null());
  EXPECT_FALSE(FlopsInfoFromJson(nlohmann::json(nullptr)));
  EXPECT_FALSE(FlopsInfoFromJson(nlohmann::json::object()));
}

// A compute-bound run on a busy A100, whose full stage reaches `mfu` of the peak for `dtype`.
ProbeResult ComputeBoundAt(double mfu, std::string dtype = "bf16") {
  ProbeResult r = WithHelper(true, 3000, 1200, 1150);
  r.machine.gpu_name = std::string(kA100);
  r.full.data_wait_share = 0.02;
  SetGpu(r.compute, 98, 6);
  SetGpu(r.full, 97, 6);
  double peak = dtype == "bf16" ? 312e12 : 19.5e12;
  r.full.flops = Count(mfu * peak / 1150, dtype);
  return r;
}

TEST(MfuVerdict, LowMfuPointsAtSmallKernelsAndLaunchOverhead) {
  Verdict v = Decide(ComputeBoundAt(0.1));
  EXPECT_EQ(v.bottleneck, "compute");
  EXPECT_EQ(v.cause,
            "GPU compute at low MFU (10% of the A100 bf16 dense peak (312 TFLOP/s)): small kernels and launch overhead");
  EXPECT_EQ(v.next, "CUDA graphs or torch.compile (fewer, fused kernels), a larger batch size");
  EXPECT_THAT(v.evidence, HasSubstr("31.2 TFLOP/s, MFU 10% of the A100 bf16 dense peak"));
}

TEST(MfuVerdict, NearThePeakOnlyFewerFlopsOrAFasterGpuHelp) {
  Verdict v = Decide(ComputeBoundAt(0.7));
  EXPECT_THAT(v.cause, HasSubstr("near the peak (MFU 70%"));
  EXPECT_EQ(v.next, "only fewer FLOPs (a smaller model or input, less recomputation) or a faster GPU will help");
}

TEST(MfuVerdict, NearTheFp32PeakMixedPrecisionStillRaisesTheCeiling) {
  Verdict v = Decide(ComputeBoundAt(0.7, "fp32"));
  EXPECT_EQ(v.cause, "GPU compute near the fp32 peak (MFU 70%)");
  EXPECT_THAT(v.next, HasSubstr("mixed precision"));
  EXPECT_THAT(v.next, HasSubstr("16x the fp32 one"));
  // At low MFU in fp32, mixed precision comes after the launch-overhead cures.
  EXPECT_THAT(Decide(ComputeBoundAt(0.1, "fp32")).next, HasSubstr(", and mixed precision"));
}

TEST(MfuVerdict, BetweenTheThresholdsTheAdviceStaysAndTheEvidenceShowsMfu) {
  Verdict v = Decide(ComputeBoundAt(0.4));
  EXPECT_EQ(v.cause, "GPU compute");
  EXPECT_THAT(v.next, HasSubstr("mixed precision"));
  EXPECT_THAT(v.evidence, HasSubstr("MFU 40%"));
}

TEST(MfuVerdict, OnACpuTheEvidenceCarriesAchievedFlops) {
  ProbeResult r = WithHelper(false, 3000, 1200, 1150);
  r.full.data_wait_share = 0.02;
  r.full.flops = Count(1e6, "fp32", "cpu");
  Verdict v = Decide(r);
  EXPECT_EQ(v.cause, "CPU compute (no GPU probed)");
  EXPECT_THAT(v.evidence, HasSubstr("1.15 GFLOP/s (on a CPU: achieved FLOP/s only)"));
}

TEST(MfuReport, StagesShowFlopsAndProbeJsonCarriesTheFields) {
  ProbeResult r = ComputeBoundAt(0.1);
  r.verdict = Decide(r);
  std::string text = ConsoleReport(r);
  EXPECT_THAT(text, HasSubstr("flops: "));
  EXPECT_THAT(text, HasSubstr("full 31.2 TFLOP/s, MFU 10% of the A100 bf16 dense peak (312 TFLOP/s)"));
  nlohmann::ordered_json j = ProbeJson(r);
  EXPECT_EQ(j["stages"]["full"]["flops"]["method"], "flop_counter");
  EXPECT_NEAR(j["stages"]["full"]["flops_rate"]["mfu"].get<double>(), 0.1, 1e-9);
  EXPECT_EQ(j["stages"]["full"]["flops_rate"]["precision"], "bf16");
  // The compute stage has no count of its own: the full stage's (the same model) serves it.
  EXPECT_NEAR(j["stages"]["compute"]["flops_rate"]["flops_per_s"].get<double>(), 0.1 * 312e12 / 1150 * 1200, 1);
  EXPECT_TRUE(j["stages"]["loader"]["flops_rate"]["flops_per_s"].is_null());
  EXPECT_TRUE(j["trace"].is_null());
}

}  // namespace
}  // namespace sat::probe
