#include "sweep/cost.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "util/spans.h"

namespace sat::sweep {

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
  std::string out = fmt::format("GPU-hours: {:.3f} held on {} GPU{}, {:.3f} with one GPU per attempt ({} attempt{})",
                                h.held, h.gpus, h.gpus == 1 ? "" : "s", h.one_per_attempt, h.attempts,
                                h.attempts == 1 ? "" : "s");
  if (saved > 1e-9) {
    out += fmt::format(": packing saved up to {:.3f} ({:.0f}%)", saved, 100 * saved / h.one_per_attempt);
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

}  // namespace sat::sweep
