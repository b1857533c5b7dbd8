// Achieved FLOP/s and model FLOPs utilisation (MFU: achieved FLOP/s over the device's dense peak) of a measured
// rate, from the helper's FLOP count of one training step (measure::FlopsInfo) and the peak table
// (peak_flops.h); and what a compute-bound verdict makes of it. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/peak_flops.h"
#include "measure/helper_message.h"

namespace sat::core {

struct StageResult;

// Below this MFU a compute-bound GPU step is small kernels and launch overhead; from kNearPeakMfu on, the GPU's
// arithmetic itself is the limit.
inline constexpr double kLowMfu = 0.25;
inline constexpr double kNearPeakMfu = 0.6;

struct FlopsReading {
  std::optional<measure::FlopsInfo> count;  // the helper's count; absent: nothing was counted
  std::optional<double> flops_per_s;        // achieved: FLOPs per sample x samples/s
  std::optional<Precision> precision;       // of the counted step's products
  const GpuPeak* gpu = nullptr;             // the device's row of the peak table, when a known GPU ran the model
  std::optional<double> peak_flops_per_s;   // the device's dense peak for `precision`
  std::optional<double> mfu;                // flops_per_s / peak_flops_per_s
  std::string no_mfu_why;                   // why there is no MFU ("on a CPU: ..."), when there is a rate
};

// The reading of a rate of `samples_per_s` (0 or not finite: not measured) for a model whose step `count`
// describes, on the GPU NVML calls `gpu_name` (empty: no GPU probed). A count made on the CPU while a GPU was
// probed gets no MFU: the model did not run on the GPU.
FlopsReading ReadFlops(const std::optional<measure::FlopsInfo>& count, double samples_per_s,
                       std::string_view gpu_name);


// 1.234e12 -> "1.23 TFLOP/s", 5.6e8 -> "560 MFLOP/s"; "n/a" when not finite.
std::string FormatFlopsPerS(double flops_per_s);
// "4.10 GFLOP per sample (forward + backward, torch FlopCounterMode)".
std::string CountText(const measure::FlopsInfo& count);
// "1.23 TFLOP/s, MFU 38% of the H100 SXM bf16 dense peak (990 TFLOP/s)", or with the reason there is no MFU
// ("12.3 GFLOP/s (on a CPU: achieved FLOP/s only)"); "" when nothing was counted or no rate measured.
std::string FlopsText(const FlopsReading& reading);
// "1.23 TFLOP/s, MFU 38%": for tables; "" as above.
std::string ShortFlopsText(const FlopsReading& reading);

// How MFU changes the compute verdict for a GPU that is busy: both empty when it does not (no MFU, or between
// kLowMfu and kNearPeakMfu). `batch_at` follows "a larger batch size" (where the batch size is set, or "").
struct MfuAdvice {
  std::string cause, next;
};
MfuAdvice AdviseOnMfu(const FlopsReading& reading, std::string_view batch_at);

// {per_step, per_sample, samples, method, dtype, tf32, device} and back (null: nothing counted); for probe.json,
// results.json and tune's cache. FromJson gives nullopt for null or a malformed object.
nlohmann::json FlopsInfoJson(const std::optional<measure::FlopsInfo>& count);
std::optional<measure::FlopsInfo> FlopsInfoFromJson(const nlohmann::json& j);
// {flops_per_s, precision, peak_flops_per_s, mfu, gpu_model, no_mfu_why}: each null when unknown.
nlohmann::json FlopsReadingJson(const FlopsReading& reading);

}  // namespace sat::core
