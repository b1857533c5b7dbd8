#include "sweep/cost.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "util/spans.h"

namespace sat::sweep {
namespace {

// Three decimals from 0.01 on; two significant digits below, so that a short sweep does not read 0.000.
std::string Amount(double v) { return v >= 0.01 || v == 0 ? fmt::format("{:.3f}", v) : fmt::format("{:.2g}", v); }

}  // namespace

GpuHours GpuHoursOf(const std::vector<AttemptRecord>& attempts, double now_unix) {
  GpuHours hours;
  std::map<int, std::vector<Span>> by_gpu;
  for (const AttemptRecord& a : attempts) {
    if (!a.gpu_index || !a.slurm_job.empty()) continue;
    const double end = a.ended_unix.value_or(now_unix);
    if (!(end > a.started_unix)) continue;
    by_gpu[*a.gpu_index].push_back({a.started_unix, end});
    hours.one_per_attempt += (end - a.started_unix) / 3600;
    ++hours.attempts;
  }
  hours.gpus = static_cast<int>(by_gpu.size());
  for (auto& [gpu, spans] : by_gpu) hours.held += UnionLength(std::move(spans)) / 3600;
  return hours;
}

std::string FormatGpuHours(const GpuHours& h, std::optional<double> price) {
  if (h.attempts == 0) return "";
  const double saved = h.one_per_attempt - h.held;
  std::string out = fmt::format("GPU-hours: {} held on {} GPU{}, {} with one GPU per attempt ({} attempt{})",
                                Amount(h.held), h.gpus, h.gpus == 1 ? "" : "s", Amount(h.one_per_attempt),
                                h.attempts, h.attempts == 1 ? "" : "s");
  if (saved > 1e-9) {
    out += fmt::format(": packing saved up to {} ({:.0f}%)", Amount(saved), 100 * saved / h.one_per_attempt);
  }
  out += "\n";
  if (price) {
    out += fmt::format("At {:.2f} per GPU-hour: {:.2f} held, {:.2f} with one GPU per attempt", *price,
                       h.held * *price, h.one_per_attempt * *price);
    if (saved > 1e-9) out += fmt::format(", up to {:.2f} saved", saved * *price);
    out += "\n";
  }
  return out;
}

nlohmann::json GpuHoursJson(const GpuHours& h, std::optional<double> price) {
  auto money = [&](double hours) { return price ? nlohmann::json(hours * *price) : nlohmann::json(nullptr); };
  return {{"gpu_hours_held", h.held},
          {"gpu_hours_one_per_attempt", h.one_per_attempt},
          {"attempts", h.attempts},
          {"gpus", h.gpus},
          {"price_per_gpu_hour", price ? nlohmann::json(*price) : nlohmann::json(nullptr)},
          {"cost_held", money(h.held)},
          {"cost_one_per_attempt", money(h.one_per_attempt)}};
}

SweepEnergy EnergyOf(const std::vector<AttemptRecord>& attempts) {
  SweepEnergy e;
  for (const AttemptRecord& a : attempts) {
    if (!a.ended_unix) continue;
    if (a.energy_j) {
      e.joules += *a.energy_j;
      ++e.attempts;
      if (a.gpu_index && a.slurm_job.empty()) e.by_gpu[*a.gpu_index] += *a.energy_j;
    } else {
      ++e.without;
    }
  }
  return e;
}

std::string FormatEnergy(const SweepEnergy& e) {
  if (e.attempts == 0) return "";
  std::string out = fmt::format("Energy: {} kWh ({:.1f} kJ) over {} attempt{}", Amount(e.joules / 3.6e6),
                                e.joules / 1e3, e.attempts, e.attempts == 1 ? "" : "s");
  if (e.without > 0) out += fmt::format(", {} without a reading", e.without);
  const char* sep = ": ";
  for (const auto& [gpu, joules] : e.by_gpu) {
    out += fmt::format("{}gpu{} {:.1f} kJ", sep, gpu, joules / 1e3);
    sep = ", ";
  }
  return out + "\n";
}

nlohmann::json EnergyJson(const SweepEnergy& e) {
  const bool known = e.attempts > 0;
  nlohmann::json by_gpu = nlohmann::json::object();
  for (const auto& [gpu, joules] : e.by_gpu) by_gpu[std::to_string(gpu)] = joules;
  return {{"joules", known ? nlohmann::json(e.joules) : nlohmann::json(nullptr)},
          {"kwh", known ? nlohmann::json(e.joules / 3.6e6) : nlohmann::json(nullptr)},
          {"attempts", e.attempts},
          {"attempts_without_reading", e.without},
          {"by_gpu", by_gpu}};
}

}  // namespace sat::sweep
