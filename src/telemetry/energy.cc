#include "telemetry/energy.h"

#include <cmath>

namespace sat::telemetry {

EnergyReading EnergyReadingOf(const Sample& s, int gpu_index) {
  EnergyReading r;
  r.t = s.mono_s;
  if (gpu_index < 0) {
    r.counter_j = s.host.cpu_energy_j;
  } else if (const GpuSample* g = GpuOf(s, gpu_index)) {
    r.counter_j = g->energy_j;
    r.power_w = g->power_draw_w;
  }
  return r;
}

std::optional<double> EnergyBetween(const std::optional<double>& first, const std::optional<double>& last) {
  if (!first || !last || *last < *first) return std::nullopt;
  return *last - *first;
}

std::optional<double> EnergyBetweenReadings(const EnergyReading& a, const EnergyReading& b, double max_power_gap_s) {
  const double dt = b.t - a.t;
  if (!(dt > 0)) return std::nullopt;
  if (std::optional<double> j = EnergyBetween(a.counter_j, b.counter_j)) return j;
  if (dt > max_power_gap_s) return std::nullopt;
  if (a.power_w && b.power_w && std::isfinite(*a.power_w) && std::isfinite(*b.power_w)) {
    return (*a.power_w + *b.power_w) / 2 * dt;
  }
  return std::nullopt;
}

}  // namespace sat::telemetry
