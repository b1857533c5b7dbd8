// Achieved FLOP/s and MFU of tune's trials (probe/mfu.h over a trial's FLOP count and rate), for the console
// report and results.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "probe/mfu.h"
#include "tune/tune.h"

namespace sat::tune {

// The reading of one trial on the machine it ran on (MFU only on a known GPU).
probe::FlopsReading TrialFlops(const Trial& trial, const Machine& machine);

// "FLOPs: 4.10 GFLOP per sample (...); recommended 1.23 TFLOP/s, MFU 38% of ...; baseline ..." from the
// confirmation and baseline trials; "" when no trial counted FLOPs.
std::string FlopsLine(const TuneResult& result);

// results.json's "flops": {count (probe::FlopsInfoJson of the confirmation, else the baseline), baseline,
// recommended (probe::FlopsReadingJson each, null when not measured)}; null when no trial counted FLOPs.
nlohmann::json FlopsJson(const TuneResult& result);

}  // namespace sat::tune
