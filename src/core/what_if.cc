#include "core/what_if.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/mfu.h"
#include "core/peak_flops.h"
#include "util/strings.h"

namespace sat::core {
namespace {

constexpr int kMaxGpus = 64;
// An estimate within this of today's rate "gains nothing".
constexpr double kGainsNothingRatio = 1.05;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One pipe's ceiling, by name.
struct Pipe {
  std::string name;
  double rate;
};

// What was measured, in the terms of the model (what_if.h), with the share of the narrowest pipe reached here.
struct Measured : WhatIfInputs {
  const GpuPeak* gpu = nullptr;  // this GPU's row
  double overlap = 1;            // full / the narrowest pipe here, at most 1
};

std::optional<double> CopyCeiling(const Measured& m, const GpuPeak& gpu, int gpus) {
  if (!m.bytes_per_sample || *m.bytes_per_sample <= 0 || gpu.host_link_bytes_per_s <= 0) return std::nullopt;
  return gpus * gpu.host_link_bytes_per_s / *m.bytes_per_sample;
}

const Pipe& Narrowest(const std::vector<Pipe>& pipes) {
  return *std::min_element(pipes.begin(), pipes.end(), [](const Pipe& a, const Pipe& b) { return a.rate < b.rate; });
}

// The loader's ceiling when it may use every core but one per trainer: its rate per core used x those cores.
std::optional<double> LoaderOnAllCores(const Measured& m, int trainers) {
  if (!m.loader || m.cores == 0) return std::nullopt;
  double cores = std::max(1.0, static_cast<double>(m.cores) - trainers);
  return *m.loader / m.loader_cores * std::max(cores, m.loader_cores);
}

WhatIfLine Line(const Measured& m, std::string label, const std::vector<Pipe>& pipes, std::optional<double> price,
                int gpus) {
  WhatIfLine line;
  line.label = std::move(label);
  const Pipe& narrow = Narrowest(pipes);
  line.samples_per_s = narrow.rate * m.overlap;
  line.narrowest = narrow.name;
  if (m.full > 0) line.vs_now = *line.samples_per_s / m.full;
  if (price && m.epoch_samples && *line.samples_per_s > 0) {
    line.per_epoch = *m.epoch_samples / *line.samples_per_s / 3600 * *price * gpus;
  }
  if (line.vs_now && *line.vs_now < kGainsNothingRatio && narrow.name != "compute") {
    line.note = fmt::format("gains nothing: the {} holds it at {}", narrow.name == "loader" ? "loader" : "host-to-device copy",
                            FormatRate(narrow.rate));
  }
  return line;
}

// A run held by its loader or storage where the model ran on the CPU: no GPU lifts it before they are fixed.
WhatIf HeldByTheLoader(const Measured& m, const std::vector<WhatIfTarget>& targets) {
  WhatIf w;
  const std::string what = m.bound_by == "storage" ? "storage" : "loader";
  for (const WhatIfTarget& t : targets) {
    const GpuPeak* gpu = FindGpuPeak(t.name);
    WhatIfLine line;
    line.label = t.gpus > 1 ? fmt::format("{} x {}", t.gpus, gpu->model) : std::string(gpu->model);
    line.samples_per_s = m.full;
    line.vs_now = 1;
    line.narrowest = what;
    line.note = fmt::format("gains nothing from a faster GPU until the {} is fixed", what);
    w.lines.push_back(std::move(line));
  }
  std::string ceiling = m.loader ? fmt::format("the loader alone reached {} here", FormatRate(*m.loader))
                                 : fmt::format("training waited on its {} at {}", what, FormatRate(m.full));
  w.assumptions.push_back(fmt::format("{}: {}, and a GPU takes only the model's work off this machine's CPU",
                                      what, ceiling));
  return w;
}

}  // namespace

Result<std::vector<WhatIfTarget>> ParseWhatIf(std::string_view text) {
  std::vector<WhatIfTarget> out;
  for (const std::string& raw : Split(text, ',')) {
    std::string item(Trim(raw));
    if (item.empty()) continue;
    WhatIfTarget t;
    std::string gpu = item;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      gpu = item.substr(0, colon);
      std::optional<double> price = ParseDouble(item.substr(colon + 1));
      if (!price || !std::isfinite(*price) || *price <= 0 || *price >= 1e6) {
        return UsageError(fmt::format("--what-if '{}': the price after ':' must be a positive number (money per "
                                      "GPU-hour, e.g. a100:1.80)", item));
      }
      t.price_per_gpu_hour = price;
    }
    if (auto x = Lower(gpu).find('x'); x != std::string::npos && x > 0) {
      std::optional<long long> n = ParseInt(gpu.substr(0, x));
      if (n) {
        if (*n < 1 || *n > kMaxGpus) {
          return UsageError(fmt::format("--what-if '{}': the GPU count must be 1 to {}", item, kMaxGpus));
        }
        t.gpus = static_cast<int>(*n);
        gpu = gpu.substr(x + 1);
      }
    }
    if (FindGpuPeak(gpu) == nullptr) {
      return UsageError(fmt::format("--what-if '{}': '{}' is not a GPU saturate knows (known: h100, h100-pcie, "
                                    "h100-nvl, gh200, h200, h200-nvl, a100, l40s, l4, a10, t4, v100, v100-pcie, "
                                    "v100s)", item, gpu));
    }
    t.name = gpu;
    out.push_back(std::move(t));
  }
  if (out.empty()) return UsageError("--what-if needs at least one GPU, e.g. --what-if h100,a100:1.80,4xl4");
  return out;
}

WhatIf EstimateWhatIf(const WhatIfInputs& inputs, const std::vector<WhatIfTarget>& targets) {
  WhatIf w;
  Measured m;
  static_cast<WhatIfInputs&>(m) = inputs;
  if (m.gpu_probed) m.gpu = FindGpuPeak(m.gpu_name);
  if (m.full <= 0) {
    w.unavailable_why = "the full stage measured no throughput";
    return w;
  }
  if (!m.gpu_probed || (m.precision && !m.on_gpu)) {
    if (!m.bound_by.empty()) return HeldByTheLoader(m, targets);
    w.unavailable_why = "the model ran on the CPU: there is no GPU's MFU to carry to another GPU";
    return w;
  }
  if (!m.compute || !m.loader) {
    w.unavailable_why = "the loader and compute stages are both needed (the script reports no DataLoader to them)";
    return w;
  }
  if (m.gpu == nullptr || !m.precision) {
    w.unavailable_why = m.gpu == nullptr ? fmt::format("'{}' is not in the peak table", m.gpu_name)
                                         : "the step's FLOPs were not counted, so its precision is unknown";
    return w;
  }
  std::optional<double> peak_here = PeakFlops(*m.gpu, *m.precision);
  if (!peak_here) {
    w.unavailable_why = "this GPU has no dense peak for the step's precision";
    return w;
  }
  std::optional<double> copy_here = CopyCeiling(m, *m.gpu, 1);
  std::vector<Pipe> here = {{"compute", *m.compute}, {"loader", *m.loader}};
  if (copy_here) here.push_back({"copy", *copy_here});
  m.overlap = std::min(1.0, m.full / Narrowest(here).rate);

  // This GPU with the loader on every core: only worth a line when the loader holds it back.
  if (Narrowest(here).name == "loader") {
    if (std::optional<double> all = LoaderOnAllCores(m, 1)) {
      std::vector<Pipe> pipes = {{"compute", *m.compute}, {"loader", *all}};
      if (copy_here) pipes.push_back({"copy", *copy_here});
      w.lines.push_back(Line(m, fmt::format("this {}, loader on {} cores", m.gpu->model, m.cores - 1), pipes,
                             m.price_per_gpu_hour, 1));
    }
  }
  for (const WhatIfTarget& t : targets) {
    const GpuPeak* gpu = FindGpuPeak(t.name);
    std::string label = t.gpus > 1 ? fmt::format("{} x {}", t.gpus, gpu->model) : std::string(gpu->model);
    std::optional<double> peak = PeakFlops(*gpu, *m.precision);
    if (!peak) {
      WhatIfLine line;
      line.label = label;
      line.note = fmt::format("n/a: the {} has no {} units", gpu->model, PrecisionName(*m.precision));
      w.lines.push_back(std::move(line));
      continue;
    }
    std::vector<Pipe> pipes = {{"compute", *m.compute * *peak / *peak_here * t.gpus}};
    // One GPU keeps today's loader; several share the node's cores.
    std::optional<double> loader = t.gpus > 1 ? LoaderOnAllCores(m, t.gpus) : m.loader;
    pipes.push_back({"loader", loader.value_or(*m.loader)});
    if (std::optional<double> copy = CopyCeiling(m, *gpu, t.gpus)) pipes.push_back({"copy", *copy});
    std::optional<double> price = t.price_per_gpu_hour;
    if (!price && gpu == m.gpu) price = m.price_per_gpu_hour;
    w.lines.push_back(Line(m, label, pipes, price, t.gpus));
  }

  w.assumptions.push_back(fmt::format("compute: {} here scaled by each GPU's dense {} peak (this {}: {}), i.e. the "
                                      "same MFU there",
                                      FormatRate(*m.compute), PrecisionName(*m.precision), m.gpu->model,
                                      FormatFlopsPerS(*peak_here)));
  w.assumptions.push_back(fmt::format("loader: {} on {} cores as configured; with more workers, {} per core on every "
                                      "core but one per trainer (the same host)",
                                      FormatRate(*m.loader), FormatNumber(m.loader_cores),
                                      FormatRate(*m.loader / m.loader_cores)));
  w.assumptions.push_back(m.bytes_per_sample
                              ? fmt::format("copy: {} per sample host-to-device (the GPU's PCIe receive counter while "
                                            "training) over each GPU's host link",
                                            FormatBytes(*m.bytes_per_sample))
                              : std::string("copy: not estimated (the GPU reported no PCIe throughput)"));
  w.assumptions.push_back(fmt::format("overlap: the full stage reached {} of its narrowest pipe here; the same share "
                                      "there; N GPUs: data parallel, communication not counted",
                                      FormatShare(m.overlap)));
  return w;
}

std::string WhatIfText(const WhatIf& w) {
  if (w.lines.empty() && w.unavailable_why.empty()) return "";
  if (w.lines.empty()) return "what-if: n/a (" + w.unavailable_why + ")\n";
  std::string out = "what-if (estimates from what was measured, not measurements):\n";
  for (const WhatIfLine& l : w.lines) {
    if (!l.samples_per_s) {
      out += fmt::format("  {}: {}\n", l.label, l.note);
      continue;
    }
    std::vector<std::string> parts = {fmt::format("~{}", FormatRate(*l.samples_per_s))};
    if (l.vs_now) parts.push_back(FormatTimes(*l.vs_now) + " today's");
    parts.push_back("narrowest: " + l.narrowest);
    if (l.per_epoch) parts.push_back(FormatNumber(*l.per_epoch) + " per epoch");
    if (!l.note.empty()) parts.push_back(l.note);
    out += fmt::format("  {}: {}\n", l.label, JoinNonEmpty(parts, " · "));
  }
  for (const std::string& a : w.assumptions) out += "  assumes " + a + '\n';
  return out;
}

}  // namespace sat::core
