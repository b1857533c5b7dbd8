#include "core/stage_costs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sat::core {

std::optional<EnergyPerSample> EnergyPerSampleOf(const StageResult& stage) {
  const std::optional<EnergyReading>& e = stage.telemetry.gpu ? stage.telemetry.gpu_energy : stage.telemetry.cpu_energy;
  if (!e || !(e->seconds > 0) || !StageMeasured(stage)) return std::nullopt;
  EnergyPerSample out;
  out.watts = e->joules / e->seconds;
  out.joules_per_sample = out.watts / stage.estimate.samples_per_s;
  out.samples_per_kwh = out.joules_per_sample > 0 ? 3.6e6 / out.joules_per_sample : 0;
  out.method = e->method;
  return out;
}

std::optional<Cost> CostOf(const StageResult& stage, double price_per_gpu_hour) {
  if (!(price_per_gpu_hour > 0) || !std::isfinite(price_per_gpu_hour) || !StageMeasured(stage)) return std::nullopt;
  Cost c;
  c.gpus = static_cast<double>(std::max<int64_t>(1, stage.world_size));
  c.per_hour = price_per_gpu_hour * c.gpus;
  const double per_sample = c.per_hour / 3600 / stage.estimate.samples_per_s;
  c.per_million_samples = per_sample * 1e6;
  double epoch = 0;
  bool known = !stage.rank_loaders.empty() || stage.loader.has_value();
  if (!stage.rank_loaders.empty()) {
    for (const auto& [rank, l] : stage.rank_loaders) {
      if (!l.epoch_samples) known = false;
      epoch += static_cast<double>(l.epoch_samples.value_or(0));
    }
    // Ranks whose loader message was lost hold the same share.
    if (known && static_cast<int64_t>(stage.rank_loaders.size()) < stage.world_size) {
      epoch *= static_cast<double>(stage.world_size) / static_cast<double>(stage.rank_loaders.size());
    }
  } else if (stage.loader) {
    known = stage.loader->epoch_samples.has_value();
    epoch = static_cast<double>(stage.loader->epoch_samples.value_or(0));
  }
  if (known && epoch > 0) {
    c.epoch_samples = epoch;
    c.per_epoch = epoch * per_sample;
  }
  return c;
}

}  // namespace sat::core
