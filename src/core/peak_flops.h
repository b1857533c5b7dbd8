// The dense peak FLOP/s of NVIDIA GPUs, by the name NVML reports and the precision a step's products run in: the
// denominator of model FLOPs utilisation (MFU). Figures are the vendor's datasheet numbers without structured
// sparsity (a datasheet's "with sparsity" figure halved); each row's source is in peak_flops.cc.
#pragma once

#include <optional>
#include <string_view>

namespace sat::core {

enum class Precision { kFp32, kTf32, kBf16, kFp16 };
std::string_view PrecisionName(Precision p);  // "fp32", "tf32", "bf16", "fp16"

// The precision of a step's matrix products from the helper's `flops` message: bf16 and fp16 as counted; fp32 as
// tf32 when torch allowed TF32 for the dominant work on a GPU; nullopt for anything else (fp64).
std::optional<Precision> PrecisionOf(std::string_view dtype, bool tf32);

// One GPU model's dense peaks in FLOP/s; nullopt where the model has no such units (no TF32 or bf16 before Ampere).
struct GpuPeak {
  std::string_view model;  // "H100 SXM", "A100", "T4", ...
  std::optional<double> fp32, tf32, bf16, fp16;
  double host_link_bytes_per_s = 0;  // the host link, one direction (PCIe Gen5 x16: 64 GB/s; GH200's NVLink-C2C)
};

// The row for an NVML device name ("NVIDIA H100 80GB HBM3", "Tesla T4", "NVIDIA A100-SXM4-80GB"), matched by
// its model token and variant (PCIe, NVL); nullptr for a GPU the table does not know.
const GpuPeak* FindGpuPeak(std::string_view nvml_name);

// The peak for `p`. TF32 on a GPU without TF32 units (V100, T4) runs as fp32, so that peak stands in; bf16 on one
// without bf16 units has no peak (nullopt).
std::optional<double> PeakFlops(const GpuPeak& gpu, Precision p);

}  // namespace sat::core
