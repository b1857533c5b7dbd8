// What a measured rate costs: the energy per sample (with a GPU, the probed GPU's: NVML's energy counter over the
// stage's steady part, else its power integrated over time; without one, the CPU packages' RAPL counter; else
// n/a, never 0), samples per kWh, and with a price per GPU-hour the money per million samples and per epoch. Pure
// functions over samples and stage results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/sample.h"

namespace sat::core {

struct StageResult;

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

struct EnergyPerSample {
  double joules_per_sample = 0;
  double samples_per_kwh = 0;
  double watts = 0;  // mean power over the reading's span
  std::string method;
};

// The stage's energy per sample: the mean power of its steady part over its steady samples/s, the GPU's when one
// was probed, else the CPUs'; nullopt when either is missing (a GPU that reports neither counter nor power, a CPU
// without readable RAPL counters, a stage that measured nothing).
std::optional<EnergyPerSample> EnergyPerSampleOf(const StageResult& stage);

struct Cost {
  double gpus = 1;                         // GPUs the job holds (its ranks, at least 1)
  double per_hour = 0;                     // price per GPU-hour x gpus
  double per_million_samples = 0;
  std::optional<double> epoch_samples;     // samples in one epoch over all ranks, when the loaders said
  std::optional<double> per_epoch;
};

// What the stage's throughput costs at `price_per_gpu_hour` for the GPUs it holds; nullopt when it measured
// nothing or the price is not positive.
std::optional<Cost> CostOf(const StageResult& stage, double price_per_gpu_hour);

}  // namespace sat::core
