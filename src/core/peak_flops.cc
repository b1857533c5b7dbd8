#include "core/peak_flops.h"

#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace sat::core {
namespace {

constexpr double kT = 1e12;
constexpr double kGB = 1e9;  // host link bandwidth per direction: PCIe Gen3 x16 16, Gen4 32, Gen5 64 GB/s

struct Row {
  std::string_view token;    // the model as one word of the NVML name, upper case: "H100", "A100", "T4"
  std::string_view variant;  // another word that must be present ("PCIE", "NVL"); empty: any
  GpuPeak peak;
};

// First match wins: a model's variants come before its plain row. The last figure of each row is the host link, one
// direction, from the same datasheet's interconnect line ("PCIe Gen5: 128 GB/s" both ways: 64 here; GH200's
// NVLink-C2C 900 GB/s both ways: 450).
const std::array<Row, 14> kRows = {{
    // NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100): H100 PCIe FP32 51, TF32 756*,
    // BF16 1,513*, FP16 1,513* TFLOPS (* with sparsity: halved here).
    {"H100", "PCIE", {"H100 PCIe", 51 * kT, 378 * kT, 756 * kT, 756 * kT, 64 * kGB}},
    // Same datasheet, H100 NVL (one GPU): FP32 60, TF32 835*, BF16 1,671*, FP16 1,671* TFLOPS.
    {"H100", "NVL", {"H100 NVL", 60 * kT, 417.5 * kT, 835.5 * kT, 835.5 * kT, 64 * kGB}},
    // Same datasheet, H100 SXM: FP32 67, TF32 989*, BF16 1,979*, FP16 1,979* TFLOPS ("NVIDIA H100 80GB HBM3").
    {"H100", "", {"H100 SXM", 67 * kT, 494.5 * kT, 989.5 * kT, 989.5 * kT, 64 * kGB}},
    // NVIDIA GH200 Grace Hopper Superchip datasheet: the H100's FP32 67, TF32 494 (989*), BF16/FP16 990 (1,979*).
    {"GH200", "", {"GH200", 67 * kT, 494.5 * kT, 989.5 * kT, 989.5 * kT, 450 * kGB}},
    // NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200): H200 NVL FP32 60, TF32 835*,
    // BF16 1,671*, FP16 1,671* TFLOPS.
    {"H200", "NVL", {"H200 NVL", 60 * kT, 417.5 * kT, 835.5 * kT, 835.5 * kT, 64 * kGB}},
    // Same datasheet, H200 SXM: FP32 67, TF32 989*, BF16 1,979*, FP16 1,979* TFLOPS.
    {"H200", "", {"H200 SXM", 67 * kT, 494.5 * kT, 989.5 * kT, 989.5 * kT, 64 * kGB}},
    // NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/a100), SXM4 and PCIe, 40 and 80 GB:
    // FP32 19.5, TF32 156 (312*), BF16 312 (624*), FP16 312 (624*) TFLOPS.
    {"A100", "", {"A100", 19.5 * kT, 156 * kT, 312 * kT, 312 * kT, 32 * kGB}},
    // NVIDIA L40S datasheet: FP32 91.6, TF32 183 (366*), BF16 362.05 (733*), FP16 362.05 (733*) TFLOPS.
    {"L40S", "", {"L40S", 91.6 * kT, 183 * kT, 362.05 * kT, 362.05 * kT, 32 * kGB}},
    // NVIDIA L4 Tensor Core GPU datasheet: FP32 30.3, TF32 120*, BF16 242*, FP16 242* TFLOPS.
    {"L4", "", {"L4", 30.3 * kT, 60 * kT, 121 * kT, 121 * kT, 32 * kGB}},
    // NVIDIA A10 Tensor Core GPU datasheet: FP32 31.2, TF32 62.5 (125*), BF16 125 (250*), FP16 125 (250*) TFLOPS.
    {"A10", "", {"A10", 31.2 * kT, 62.5 * kT, 125 * kT, 125 * kT, 32 * kGB}},
    // NVIDIA T4 Tensor Core GPU datasheet: FP32 8.1, mixed-precision FP16/FP32 65 TFLOPS; no TF32 or bf16 units.
    {"T4", "", {"T4", 8.1 * kT, std::nullopt, std::nullopt, 65 * kT, 16 * kGB}},
    // NVIDIA V100 Tensor Core GPU datasheet: V100S PCIe FP32 16.4, Tensor 130 TFLOPS; no TF32 or bf16 units.
    {"V100S", "", {"V100S PCIe", 16.4 * kT, std::nullopt, std::nullopt, 130 * kT, 16 * kGB}},
    // Same datasheet, V100 PCIe: FP32 14, Tensor 112 TFLOPS.
    {"V100", "PCIE", {"V100 PCIe", 14 * kT, std::nullopt, std::nullopt, 112 * kT, 16 * kGB}},
    // Same datasheet, V100 SXM2: FP32 15.7, Tensor 125 TFLOPS ("Tesla V100-SXM2-32GB"; SXM3 the same).
    {"V100", "", {"V100 SXM2", 15.7 * kT, std::nullopt, std::nullopt, 125 * kT, 16 * kGB}},
}};

// The upper-case words of a name: "Tesla V100-SXM2-32GB" -> TESLA, V100, SXM2, 32GB.
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words(1);
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      words.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!words.back().empty()) {
      words.emplace_back();
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

bool Has(const std::vector<std::string>& words, std::string_view word) {
  for (const std::string& w : words)
    if (w == word) return true;
  return false;
}

}  // namespace

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
  }
  return "?";
}

std::optional<Precision> PrecisionOf(std::string_view dtype, bool tf32) {
  if (dtype == "bf16") return Precision::kBf16;
  if (dtype == "fp16") return Precision::kFp16;
  if (dtype == "fp32") return tf32 ? Precision::kTf32 : Precision::kFp32;
  return std::nullopt;
}

const GpuPeak* FindGpuPeak(std::string_view nvml_name) {
  const std::vector<std::string> words = Words(nvml_name);
  for (const Row& row : kRows) {
    if (Has(words, row.token) && (row.variant.empty() || Has(words, row.variant))) return &row.peak;
  }
  return nullptr;
}

std::optional<double> PeakFlops(const GpuPeak& gpu, Precision p) {
  switch (p) {
    case Precision::kFp32: return gpu.fp32;
    case Precision::kTf32: return gpu.tf32 ? gpu.tf32 : gpu.fp32;
    case Precision::kBf16: return gpu.bf16;
    case Precision::kFp16: return gpu.fp16;
  }
  return std::nullopt;
}

}  // namespace sat::core
