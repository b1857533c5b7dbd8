// What a measured rate costs: the probed GPU's energy per sample (NVML's energy counter over the stage's steady
// part, else its power integrated over time, else n/a: never 0), samples per kWh, and with a price per GPU-hour
// the money per million samples and per epoch. Pure functions over samples and stage results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace sat::probe {

struct StageResult;

struct EnergyReading {
  double joules = 0;
  double seconds = 0;  // the span the joules cover
  std::string method;  // "counter" (nvmlDeviceGetTotalEnergyConsumption) or "power x time" (power.draw)
};

// The energy of GPU `gpu_index` between the first and the last of `samples` (time order): the energy counter's
// growth when the first and last samples both carry it, else power draw integrated by trapezoids over the samples
// that carry it (at least two); nullopt otherwise, or when the span is not positive.
std::optional<EnergyReading> GpuEnergy(const std::vector<telemetry::Sample>& samples, int gpu_index);

struct EnergyPerSample {
  double joules_per_sample = 0;
  double samples_per_kwh = 0;
  double watts = 0;  // mean power over the reading's span
  std::string method;
};

// The stage's energy per sample: the mean power of its steady part over its steady samples/s; nullopt when either
// is missing (a CPU-only probe, a GPU that reports neither counter nor power, a stage that measured nothing).
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

}  // namespace sat::probe
