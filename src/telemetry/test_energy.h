// Energy readings for tests (telemetry/energy.h): a device drawing a constant power since t = 0, read through
// its counter or its power draw, and a reading with neither (NVML failed once).
#pragma once

#include <optional>

#include "telemetry/energy.h"

namespace sat::telemetry {

inline EnergyReading CounterAt(double t, double watts) { return EnergyReading{t, watts * t, std::nullopt}; }
inline EnergyReading PowerAt(double t, double watts) { return EnergyReading{t, std::nullopt, watts}; }
inline EnergyReading NothingAt(double t) { return EnergyReading{t, std::nullopt, std::nullopt}; }

}  // namespace sat::telemetry
