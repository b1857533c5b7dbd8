// Energy between two readings of one device: a GPU (NVML's energy counter, else its power draw) or the CPU
// packages (the RAPL counter, telemetry/rapl.h). The one place that turns counters and power into joules, for
// probe's stages (core/energy.h), the sweep's attempts (sweep/energy_ledger.h) and the Slurm node wrapper. Pure.
#pragma once

#include <limits>
#include <optional>

#include "telemetry/sample.h"

namespace sat::telemetry {

// One device at one instant.
struct EnergyReading {
  double t = 0;                     // CLOCK_MONOTONIC s (Sample::mono_s)
  std::optional<double> counter_j;  // an energy counter: joules since some origin
  std::optional<double> power_w;    // the power drawn now
};

// GPU `gpu_index` in `s` (its energy counter and power draw), or the CPU packages' RAPL counter when gpu_index is
// negative; a reading with neither when the sample lacks them.
EnergyReading EnergyReadingOf(const Sample& s, int gpu_index);

// A counter's growth between two readings of it, in joules; nullopt when either is missing or it went backwards
// (a new counter: the driver was reloaded).
std::optional<double> EnergyBetween(const std::optional<double>& first, const std::optional<double>& last);

// The energy between two readings: the counter's growth when both carry it and it grew, else the mean of their
// powers times the time between (trapezoid) when they are at most `max_power_gap_s` apart (two powers minutes
// apart say nothing of the power between them); nullopt when neither applies or b is not after a.
std::optional<double> EnergyBetweenReadings(const EnergyReading& a, const EnergyReading& b,
                                            double max_power_gap_s = std::numeric_limits<double>::infinity());

}  // namespace sat::telemetry
