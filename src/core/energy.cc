#include "core/energy.h"

#include <cmath>

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

}  // namespace sat::core
