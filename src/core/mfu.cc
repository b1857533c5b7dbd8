#include "core/mfu.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "util/strings.h"

namespace sat::core {
namespace {

using nlohmann::json;

// "1.23 T", "560 M": three significant figures with an SI prefix.
std::string Si(double value) {
  constexpr std::array<std::string_view, 6> kPrefixes = {"", "k", "M", "G", "T", "P"};
  size_t i = 0;
  while (i + 1 < kPrefixes.size() && std::fabs(value) >= 1000) {
    value /= 1000;
    ++i;
  }
  int decimals = std::fabs(value) >= 100 ? 0 : std::fabs(value) >= 10 ? 1 : 2;
  return fmt::format("{:.{}f} {}", value, decimals, kPrefixes[i]);
}

std::string PeakName(const FlopsReading& r) {
  return fmt::format("the {} {} dense peak ({})", r.gpu->model, PrecisionName(*r.precision),
                     FormatFlopsPerS(*r.peak_flops_per_s));
}

// MFU as a percentage: one decimal below 10% (a small model on a large GPU), whole numbers above.
std::string MfuText(double mfu) { return mfu < 0.095 ? fmt::format("{:.1f}%", mfu * 100) : FormatShare(mfu); }

bool Fp32(Precision p) { return p == Precision::kFp32 || p == Precision::kTf32; }

// The 16-bit peak of the GPU, when it is above the one a 32-bit run is held to: mixed precision would raise the
// ceiling.
std::optional<double> HigherHalfPeak(const FlopsReading& r) {
  if (r.gpu == nullptr || !r.precision || !Fp32(*r.precision) || !r.peak_flops_per_s) return std::nullopt;
  std::optional<double> half = r.gpu->bf16 ? r.gpu->bf16 : r.gpu->fp16;
  if (!half || *half <= *r.peak_flops_per_s) return std::nullopt;
  return half;
}

}  // namespace

FlopsReading ReadFlops(const std::optional<measure::FlopsInfo>& count, double samples_per_s,
                       std::string_view gpu_name) {
  FlopsReading r;
  r.count = count;
  if (!count || count->per_sample <= 0) return r;
  r.precision = PrecisionOf(count->dtype, count->tf32);
  if (!std::isfinite(samples_per_s) || samples_per_s <= 0) return r;
  r.flops_per_s = count->per_sample * samples_per_s;
  if (gpu_name.empty()) {
    r.no_mfu_why = "on a CPU: achieved FLOP/s only";
  } else if (count->device != "cuda") {
    r.no_mfu_why = fmt::format("the model ran on the {}, not the GPU", count->device.empty() ? "CPU" : count->device);
  } else if (r.gpu = FindGpuPeak(gpu_name); r.gpu == nullptr) {
    r.no_mfu_why = fmt::format("no peak known for {}", gpu_name);
  } else if (!r.precision) {
    r.no_mfu_why = fmt::format("no peak for {} products", count->dtype);
  } else if (r.peak_flops_per_s = PeakFlops(*r.gpu, *r.precision); !r.peak_flops_per_s) {
    r.no_mfu_why = fmt::format("the {} has no {} units", r.gpu->model, PrecisionName(*r.precision));
  } else {
    r.mfu = *r.flops_per_s / *r.peak_flops_per_s;
  }
  return r;
}

std::string FormatFlopsPerS(double flops_per_s) {
  if (!std::isfinite(flops_per_s)) return "n/a";
  return Si(flops_per_s) + "FLOP/s";
}

std::string CountText(const measure::FlopsInfo& c) {
  std::string how = c.method == "flop_counter" ? "torch FlopCounterMode"
                    : c.method == "module_hooks"
                        ? "3 x the forward of nn.Linear, nn.Conv and nn.MultiheadAttention modules"
                        : c.method;
  return fmt::format("{}FLOP per sample (forward + backward, {}; {} products{})", Si(c.per_sample), how,
                     c.dtype.empty() ? "fp32" : c.dtype, c.tf32 ? " with TF32 allowed" : "");
}

std::string FlopsText(const FlopsReading& r) {
  if (!r.flops_per_s) return "";
  std::string achieved = FormatFlopsPerS(*r.flops_per_s);
  if (r.mfu) return fmt::format("{}, MFU {} of {}", achieved, MfuText(*r.mfu), PeakName(r));
  return fmt::format("{} ({})", achieved, r.no_mfu_why);
}

std::string ShortFlopsText(const FlopsReading& r) {
  if (!r.flops_per_s) return "";
  std::string achieved = FormatFlopsPerS(*r.flops_per_s);
  return r.mfu ? fmt::format("{}, MFU {}", achieved, MfuText(*r.mfu)) : achieved;
}

MfuAdvice AdviseOnMfu(const FlopsReading& r, std::string_view batch_at) {
  MfuAdvice a;
  if (!r.mfu) return a;
  std::optional<double> half = HigherHalfPeak(r);
  if (*r.mfu < kLowMfu) {
    a.cause = fmt::format("GPU compute at low MFU ({} of {}): small kernels and launch overhead", MfuText(*r.mfu),
                          PeakName(r));
    a.next = fmt::format("CUDA graphs or torch.compile (fewer, fused kernels), a larger batch size{}{}", batch_at,
                         half ? ", and mixed precision (bf16/fp16 autocast)" : "");
  } else if (*r.mfu >= kNearPeakMfu && half) {
    a.cause = fmt::format("GPU compute near the {} peak (MFU {})", PrecisionName(*r.precision), MfuText(*r.mfu));
    a.next = fmt::format("mixed precision (bf16/fp16 autocast): the {} 16-bit peak is {:.0f}x the {} one; beyond "
                         "that only fewer FLOPs or a faster GPU will help",
                         r.gpu->model, *half / *r.peak_flops_per_s, PrecisionName(*r.precision));
  } else if (*r.mfu >= kNearPeakMfu) {
    a.cause = fmt::format("GPU compute near the peak (MFU {} of {})", MfuText(*r.mfu), PeakName(r));
    a.next = "only fewer FLOPs (a smaller model or input, less recomputation) or a faster GPU will help";
  }
  return a;
}

json FlopsInfoJson(const std::optional<measure::FlopsInfo>& c) {
  if (!c) return nullptr;
  return {{"per_step", c->per_step}, {"per_sample", c->per_sample}, {"samples", c->samples},
          {"method", c->method},     {"dtype", c->dtype},           {"tf32", c->tf32},
          {"device", c->device}};
}

std::optional<measure::FlopsInfo> FlopsInfoFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto number = [&j](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  auto text = [&j](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  measure::FlopsInfo c;
  c.per_step = number("per_step");
  c.per_sample = number("per_sample");
  c.samples = number("samples");
  c.method = text("method");
  c.dtype = text("dtype");
  auto tf32 = j.find("tf32");
  c.tf32 = tf32 != j.end() && tf32->is_boolean() && tf32->get<bool>();
  c.device = text("device");
  if (c.per_sample <= 0) return std::nullopt;
  return c;
}

json FlopsReadingJson(const FlopsReading& r) {
  auto opt = [](const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); };
  return {{"flops_per_s", opt(r.flops_per_s)},
          {"precision", r.precision ? json(std::string(PrecisionName(*r.precision))) : json(nullptr)},
          {"peak_flops_per_s", opt(r.peak_flops_per_s)},
          {"mfu", opt(r.mfu)},
          {"gpu_model", r.gpu ? json(std::string(r.gpu->model)) : json(nullptr)},
          {"no_mfu_why", r.no_mfu_why.empty() ? json(nullptr) : json(r.no_mfu_why)}};
}

}  // namespace sat::core
