#include "core/peak_flops.h"

#include <gtest/gtest.h>

namespace sat::core {
namespace {

std::string_view Model(std::string_view nvml_name) {
  const GpuPeak* g = FindGpuPeak(nvml_name);
  return g ? g->model : "none";
}

TEST(PeakFlops, FindsTheModelFromTheNamesNvmlReports) {
  EXPECT_EQ(Model("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(Model("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(Model("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(Model("NVIDIA H200"), "H200 SXM");
  EXPECT_EQ(Model("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(Model("NVIDIA GH200 480GB"), "GH200");
  EXPECT_EQ(Model("NVIDIA A100-SXM4-80GB"), "A100");
  EXPECT_EQ(Model("NVIDIA A100 80GB PCIe"), "A100");
  EXPECT_EQ(Model("NVIDIA A100-PCIE-40GB"), "A100");
  EXPECT_EQ(Model("NVIDIA L4"), "L4");
  EXPECT_EQ(Model("NVIDIA L40S"), "L40S");
  EXPECT_EQ(Model("NVIDIA A10"), "A10");
  EXPECT_EQ(Model("Tesla T4"), "T4");
  EXPECT_EQ(Model("Tesla V100-SXM2-32GB"), "V100 SXM2");
  EXPECT_EQ(Model("Tesla V100-PCIE-16GB"), "V100 PCIe");
  EXPECT_EQ(Model("Tesla V100S-PCIE-32GB"), "V100S PCIe");
  // A model name is a whole word: an L40 is not an L4, an A10G is not an A10 or an A100.
  EXPECT_EQ(Model("NVIDIA L40"), "none");
  EXPECT_EQ(Model("NVIDIA A10G"), "none");
  EXPECT_EQ(Model("NVIDIA GeForce RTX 4090"), "none");
  EXPECT_EQ(Model(""), "none");
}

TEST(PeakFlops, DensePeaksPerPrecision) {
  const GpuPeak& h100 = *FindGpuPeak("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(*PeakFlops(h100, Precision::kBf16), 989.5e12);
  EXPECT_DOUBLE_EQ(*PeakFlops(h100, Precision::kFp16), 989.5e12);
  EXPECT_DOUBLE_EQ(*PeakFlops(h100, Precision::kTf32), 494.5e12);
  EXPECT_DOUBLE_EQ(*PeakFlops(h100, Precision::kFp32), 67e12);
  const GpuPeak& a100 = *FindGpuPeak("NVIDIA A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(*PeakFlops(a100, Precision::kBf16), 312e12);
  EXPECT_DOUBLE_EQ(*PeakFlops(a100, Precision::kTf32), 156e12);
  // Before Ampere: TF32 allowed by torch still runs fp32; bf16 has no tensor-core peak.
  const GpuPeak& v100 = *FindGpuPeak("Tesla V100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(*PeakFlops(v100, Precision::kTf32), 15.7e12);
  EXPECT_DOUBLE_EQ(*PeakFlops(v100, Precision::kFp16), 125e12);
  EXPECT_FALSE(PeakFlops(v100, Precision::kBf16).has_value());
  EXPECT_FALSE(PeakFlops(*FindGpuPeak("Tesla T4"), Precision::kBf16).has_value());
}

TEST(PeakFlops, PrecisionOfACountedStep) {
  EXPECT_EQ(PrecisionOf("bf16", false), Precision::kBf16);
  EXPECT_EQ(PrecisionOf("fp16", true), Precision::kFp16);
  EXPECT_EQ(PrecisionOf("fp32", false), Precision::kFp32);
  EXPECT_EQ(PrecisionOf("fp32", true), Precision::kTf32);
  EXPECT_FALSE(PrecisionOf("fp64", false).has_value());
  EXPECT_EQ(PrecisionName(Precision::kTf32), "tf32");
}

}  // namespace
}  // namespace sat::core
