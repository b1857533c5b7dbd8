#include "tune/flops.h"

#include <fmt/format.h>

#include "core/energy.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

// The trials the report speaks of, when they succeeded: the confirmation of the recommendation, the baseline.
const Trial* Measured(const SearchOutcome& s, std::optional<int> id) {
  const Trial* t = s.FindTrial(id);
  return t != nullptr && Succeeded(*t) ? t : nullptr;
}

// The count the report names: the confirmation's, else the baseline's, else any trial's.
const Trial* Counted(const SearchOutcome& s) {
  for (std::optional<int> id : {s.confirm_trial, s.baseline_trial}) {
    if (const Trial* t = s.FindTrial(id); t != nullptr && t->flops) return t;
  }
  for (const Trial& t : s.trials)
    if (t.flops) return &t;
  return nullptr;
}

}  // namespace

core::FlopsReading TrialFlops(const Trial& t, const core::Machine& m) {
  return core::ReadFlops(t.flops, t.samples_per_s, m.gpu_index >= 0 ? std::string_view(m.gpu_name) : "");
}

std::string FlopsLine(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  const Trial* counted = Counted(s);
  if (counted == nullptr) return "";
  std::vector<std::string> parts = {core::CountText(*counted->flops)};
  for (auto [name, id] : {std::pair{"recommended", s.confirm_trial}, std::pair{"baseline", s.baseline_trial}}) {
    const Trial* t = Measured(s, id);
    if (t == nullptr) continue;
    if (std::string text = core::FlopsText(TrialFlops(*t, r.machine)); !text.empty())
      parts.push_back(fmt::format("{} {}", name, text));
  }
  return "FLOPs: " + JoinNonEmpty(parts, "; ");
}

nlohmann::json FlopsJson(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  const Trial* counted = Counted(s);
  if (counted == nullptr) return nullptr;
  auto reading = [&](std::optional<int> id) {
    const Trial* t = Measured(s, id);
    return t != nullptr ? core::FlopsReadingJson(TrialFlops(*t, r.machine)) : nlohmann::json(nullptr);
  };
  return {{"count", core::FlopsInfoJson(counted->flops)},
          {"baseline", reading(s.baseline_trial)},
          {"recommended", reading(s.confirm_trial)}};
}

std::string EnergyLine(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  std::vector<std::string> parts;
  std::string method;
  for (auto [name, id] : {std::pair{"recommended", s.confirm_trial}, std::pair{"baseline", s.baseline_trial}}) {
    const Trial* t = Measured(s, id);
    if (t == nullptr || !t->joules_per_sample || *t->joules_per_sample <= 0) continue;
    if (method.empty()) method = t->energy_method;
    std::string watts = t->watts ? fmt::format(" at {} W", FormatNumber(*t->watts)) : "";
    parts.push_back(fmt::format("{} {} J per sample ({} million samples per kWh){}", name,
                                FormatNumber(*t->joules_per_sample), FormatNumber(3.6 / *t->joules_per_sample), watts));
  }
  if (parts.empty()) return "";
  return fmt::format("Energy, from {}: {}", core::EnergySource(method), JoinNonEmpty(parts, "; "));
}

namespace {

// Money per million samples of a measured trial at the price, for the GPUs it held (its ranks, at least 1).
std::optional<std::pair<double, int64_t>> PerMillion(const Trial* t, double price_per_gpu_hour) {
  if (t == nullptr || !(t->samples_per_s > 0)) return std::nullopt;
  const int64_t gpus = std::max<int64_t>(1, t->world_size);
  return std::pair{price_per_gpu_hour * static_cast<double>(gpus) / 3600 / t->samples_per_s * 1e6, gpus};
}

}  // namespace

std::string CostLine(const TuneResult& r) {
  if (!r.price_per_gpu_hour) return "";
  const SearchOutcome& s = r.search;
  std::vector<std::string> parts;
  for (auto [name, id] : {std::pair{"recommended", s.confirm_trial}, std::pair{"baseline", s.baseline_trial}}) {
    if (auto cost = PerMillion(Measured(s, id), *r.price_per_gpu_hour)) {
      parts.push_back(fmt::format("{} {} per million samples{}", name, FormatNumber(cost->first),
                                  cost->second > 1 ? fmt::format(" (x {} GPUs)", cost->second) : std::string()));
    }
  }
  if (parts.empty()) return "";
  return fmt::format("Cost at {} per GPU-hour: {}", FormatNumber(*r.price_per_gpu_hour), JoinNonEmpty(parts, "; "));
}

nlohmann::json CostJson(const TuneResult& r) {
  if (!r.price_per_gpu_hour) return nullptr;
  const SearchOutcome& s = r.search;
  auto one = [&](std::optional<int> id) -> nlohmann::json {
    auto cost = PerMillion(Measured(s, id), *r.price_per_gpu_hour);
    if (!cost) return nullptr;
    return {{"per_million_samples", cost->first}, {"gpus", cost->second}};
  };
  return {{"price_per_gpu_hour", *r.price_per_gpu_hour},
          {"baseline", one(s.baseline_trial)},
          {"recommended", one(s.confirm_trial)}};
}

core::WhatIfInputs TuneWhatIfInputs(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  core::WhatIfInputs in;
  const Trial* full = Measured(s, s.confirm_trial);
  if (full == nullptr) full = Measured(s, s.baseline_trial);
  const Trial* compute = Measured(s, s.recommended_batch_trial);
  if (compute == nullptr) compute = Measured(s, s.compute_ceiling_trial);
  // The loader trial of the recommended settings' workers, else the ceiling's.
  const Trial* loader = nullptr;
  for (int id : s.loader_curve) {
    const Trial* t = Measured(s, id);
    if (t != nullptr && t->request.knobs == s.recommended) loader = t;
  }
  if (loader == nullptr) loader = Measured(s, s.loader_ceiling_trial);
  if (full != nullptr) in.full = full->samples_per_s;
  if (compute != nullptr) in.compute = compute->samples_per_s;
  if (loader != nullptr) {
    in.loader = loader->samples_per_s;
    if (loader->cpu_pct) in.loader_cores = std::max(1.0, *loader->cpu_pct / 100);
  }
  in.gpu_probed = r.machine.gpu_index >= 0;
  in.gpu_name = r.machine.gpu_name;
  in.cores = r.machine.cpu_count;
  if (full != nullptr) {
    core::FlopsReading flops = TrialFlops(*full, r.machine);
    in.precision = flops.precision;
    in.on_gpu = flops.count && flops.count->device != "cpu";
    if (full->pcie_rx_bytes_per_s && full->samples_per_s > 0) {
      in.bytes_per_sample = *full->pcie_rx_bytes_per_s / full->samples_per_s;
    }
  }
  in.price_per_gpu_hour = r.price_per_gpu_hour;
  return in;
}

std::string WhatIfSection(const TuneResult& r) {
  if (r.what_if.empty()) return "";
  return core::WhatIfText(core::EstimateWhatIf(TuneWhatIfInputs(r), r.what_if));
}

}  // namespace sat::tune
