#include "core/energy.h"

#include <cmath>

#include "core/stage.h"
#include "telemetry/energy.h"

namespace sat::core {

std::optional<EnergyReading> GpuEnergy(const std::vector<telemetry::Sample>& samples, int gpu_index) {
  if (gpu_index < 0 || samples.size() < 2) return std::nullopt;
  const telemetry::EnergyReading first = telemetry::EnergyReadingOf(samples.front(), gpu_index);
  const telemetry::EnergyReading last = telemetry::EnergyReadingOf(samples.back(), gpu_index);
  if (auto j = telemetry::EnergyBetween(first.counter_j, last.counter_j); j && last.t > first.t) {
    return EnergyReading{*j, last.t - first.t, "counter"};
  }
  // Power x time: trapezoids between consecutive samples that both carry a power reading.
  double joules = 0, seconds = 0;
  std::optional<telemetry::EnergyReading> prev;
  for (const telemetry::Sample& s : samples) {
    telemetry::EnergyReading r = telemetry::EnergyReadingOf(s, gpu_index);
    r.counter_j.reset();
    if (prev) {
      if (std::optional<double> j = telemetry::EnergyBetweenReadings(*prev, r)) {
        joules += *j;
        seconds += r.t - prev->t;
      }
    }
    prev = r;
  }
  if (!(seconds > 0)) return std::nullopt;
  return EnergyReading{joules, seconds, "power x time"};
}

std::optional<EnergyReading> CpuEnergy(const std::vector<telemetry::Sample>& samples) {
  if (samples.size() < 2) return std::nullopt;
  const double span = samples.back().mono_s - samples.front().mono_s;
  std::optional<double> j = telemetry::EnergyBetween(samples.front().host.cpu_energy_j, samples.back().host.cpu_energy_j);
  if (!j || !(span > 0)) return std::nullopt;
  return EnergyReading{*j, span, "rapl"};
}

std::string EnergySource(std::string_view method) {
  if (method == "counter") return "NVML's energy counter (the GPU only)";
  if (method == "power x time") return "power draw x time (the GPU only)";
  return "the CPU packages' RAPL counters (all of the machine's CPUs)";
}

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
