#include "core/mfu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/test_stages.h"

namespace sat::core {
namespace {

using ::testing::HasSubstr;
using fixtures::Count;

constexpr std::string_view kA100 = "NVIDIA A100-SXM4-80GB";

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

}  // namespace
}  // namespace sat::core
