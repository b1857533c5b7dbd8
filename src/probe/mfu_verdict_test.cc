// The verdict and the report of a probe read the FLOP/s reading of core/mfu.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/test_stages.h"
#include "probe/report.h"
#include "probe/test_results.h"
#include "probe/verdict.h"

namespace sat::probe {
namespace {

using ::testing::HasSubstr;
using namespace results;
using core::fixtures::Count;

constexpr std::string_view kA100 = "NVIDIA A100-SXM4-80GB";

// A compute-bound run on a busy A100, whose full stage reaches `mfu` of the peak for `dtype`.
ProbeResult ComputeBoundAt(double mfu, std::string dtype = "bf16") {
  ProbeResult r = WithHelper(true, 3000, 1200, 1150);
  r.machine.gpu_name = std::string(kA100);
  r.full.data_wait_share = 0.02;
  SetGpu(r.compute, 98, 6);
  SetGpu(r.full, 97, 6);
  double peak = dtype == "fp32" ? 19.5e12 : 312e12;  // the A100's bf16 and fp16 dense peaks are alike
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
  Verdict v = Decide(ComputeBoundAt(0.4, "fp32"));
  EXPECT_EQ(v.cause, "GPU compute");
  EXPECT_THAT(v.next, HasSubstr("mixed precision"));
  EXPECT_THAT(v.evidence, HasSubstr("MFU 40%"));
}

// The helper counted the products in bf16 or fp16: mixed precision is on already, so it is not advised again.
TEST(MfuVerdict, AStepAlreadyInSixteenBitsIsNotToldToTurnOnMixedPrecision) {
  EXPECT_EQ(Decide(ComputeBoundAt(0.4)).next, "a larger batch size");
  EXPECT_EQ(Decide(ComputeBoundAt(0.4, "fp16")).next, "a larger batch size");
  // A GPU busy a fifth of the time (the H200's Hugging Face Trainer with --bf16: CPU-side work in the step).
  ProbeResult r = ComputeBoundAt(0.01);
  SetGpu(r.compute, 20, 6);
  SetGpu(r.full, 19, 6);
  Verdict v = Decide(r);
  EXPECT_THAT(v.cause, HasSubstr("CPU-side work in the step"));
  EXPECT_EQ(v.next, "a larger batch size (fewer, larger kernels)");
  r.full.flops = core::fixtures::Count(0.01 * 19.5e12 / 1150, "fp32");
  EXPECT_EQ(Decide(r).next, "a larger batch size (fewer, larger kernels), then mixed precision (bf16/fp16 autocast)");
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
