// What a stage's measured rate costs: the energy per sample (core/energy.h's reading over its steady part, the
// probed GPU's, else the CPU packages'; n/a, never 0), samples per kWh, and with a price per GPU-hour the money per
// million samples and per epoch. Pure functions over stage results.
#pragma once

#include <optional>
#include <string>

#include "core/stage.h"

namespace sat::core {

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
