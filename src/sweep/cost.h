// What a local sweep held of its GPUs, and what that costs at a price per GPU-hour, against giving every attempt a
// GPU of its own. Read from the journal's attempts (start, end, GPU); shown at the end of `saturate sweep` and by
// `saturate sweep status`, in money with `--price-per-hour` or `saturate: {price_per_gpu_hour: ...}` in the spec.
//
// held: per GPU, the time at least one attempt ran on it (the union of the attempts' intervals), summed over the
// GPUs: what the sweep occupied. one_per_attempt: every attempt's own run time, summed: the GPU-hours of the same
// attempts with one GPU each, at the speeds they had here. Packed runs share a GPU and may run slower than alone,
// so the difference (what packing saved) is an upper bound; saturate packs only while no resource is saturated,
// which keeps that slowdown small. Every attempt counts, failed and retried ones too: their time was paid for.
//
// energy: the joules the journal's ended attempts used (their share of their device's energy, see
// sweep/energy_ledger.h; a Slurm attempt's from its node), failed and retried ones too.
// Pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/records.h"

namespace sat::sweep {

struct GpuHours {
  double held = 0;             // GPU-hours the sweep occupied (see above)
  double one_per_attempt = 0;  // GPU-hours with one GPU per attempt
  int attempts = 0;            // attempts on a GPU that count (ended, or running and counted up to `now_unix`)
  int gpus = 0;                // distinct GPUs they ran on
};

// Attempts without a GPU (a CPU sweep, a Slurm attempt) are left out; one still running counts up to `now_unix`.
GpuHours GpuHoursOf(const std::vector<AttemptRecord>& attempts, double now_unix);

// "GPU-hours: 1.250 held on 2 GPUs, 2.000 with one GPU per attempt (12 attempts): packing saved up to 0.750 (38%)",
// and with a price the same in money ("At 2.50 per GPU-hour: 3.13 held, 5.00 with one GPU per attempt, up to 1.88
// saved"); "" when no attempt ran on a GPU.
std::string FormatGpuHours(const GpuHours& hours, std::optional<double> price_per_gpu_hour);
// {"gpu_hours_held", "gpu_hours_one_per_attempt", "attempts", "gpus", "price_per_gpu_hour", "cost_held",
// "cost_one_per_attempt"}; the price and costs null without a price.
nlohmann::json GpuHoursJson(const GpuHours& hours, std::optional<double> price_per_gpu_hour);

struct SweepEnergy {
  double joules = 0;     // summed over the attempts with a reading
  int attempts = 0;      // ended attempts with a reading
  int without = 0;       // ended attempts without one (no counter or power on their device, or interrupted)
  std::map<int, double> by_gpu;  // joules of this machine's attempts per GPU index (not Slurm's)
};

SweepEnergy EnergyOf(const std::vector<AttemptRecord>& attempts);

// "Energy: 0.125 kWh (450.0 kJ) over 12 attempts, 2 without a reading: gpu0 300.0 kJ, gpu1 150.0 kJ" (the parts
// after the count when they apply); "" when no attempt has a reading.
std::string FormatEnergy(const SweepEnergy& energy);
// {"joules", "kwh", "attempts", "attempts_without_reading", "by_gpu": {"0": joules, ...}}; joules and kwh null
// when no attempt has a reading.
nlohmann::json EnergyJson(const SweepEnergy& energy);

}  // namespace sat::sweep
