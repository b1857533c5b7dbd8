// Energy over a span of samples: with a GPU, the probed GPU's (NVML's energy counter, else its power integrated over
// time); without one, the CPU packages' RAPL counter; else n/a, never 0. What a stage's rate costs in energy and
// money is core/stage_costs.h. Pure functions over samples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/sample.h"

namespace sat::core {

struct EnergyReading {
  double joules = 0;
  double seconds = 0;  // the span the joules cover
  // "counter" (nvmlDeviceGetTotalEnergyConsumption), "power x time" (power.draw) or "rapl" (the CPU packages'
  // counter, the whole machine's CPUs: telemetry/rapl.h)
  std::string method;
};

// The energy of GPU `gpu_index` between the first and the last of `samples` (time order): the energy counter's
// growth when the first and last samples both carry it, else power draw integrated by trapezoids over the samples
// that carry it (at least two); nullopt otherwise, or when the span is not positive.
std::optional<EnergyReading> GpuEnergy(const std::vector<telemetry::Sample>& samples, int gpu_index);

// The CPU packages' energy between the first and the last of `samples` (HostSample::cpu_energy_j); nullopt when
// either lacks it or the span is not positive.
std::optional<EnergyReading> CpuEnergy(const std::vector<telemetry::Sample>& samples);

// Where a reading of `method` comes from, for reports: "NVML's energy counter (the GPU only)", "power draw x time
// (the GPU only)" or "the CPU packages' RAPL counters (all of the machine's CPUs)".
std::string EnergySource(std::string_view method);

}  // namespace sat::core
