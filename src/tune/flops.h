// What tune's trials did for their work: achieved FLOP/s and MFU (core/mfu.h over a trial's FLOP count and
// rate) and the GPU's energy per sample, for the console report, report.html and results.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/mfu.h"
#include "core/what_if.h"
#include "tune/tune.h"

namespace sat::tune {

// The reading of one trial on the machine it ran on (MFU only on a known GPU).
core::FlopsReading TrialFlops(const Trial& trial, const core::Machine& machine);

// "FLOPs: 4.10 GFLOP per sample (...); recommended 1.23 TFLOP/s, MFU 38% of ...; baseline ..." from the
// confirmation and baseline trials; "" when no trial counted FLOPs.
std::string FlopsLine(const TuneResult& result);

// "Energy, from NVML's energy counter (the GPU only): recommended 0.207 J per sample (17.4 million samples per kWh) at 415 W;
// baseline 0.304 J per sample (11.8 million samples per kWh) at 525 W"; "" when neither trial has a reading.
std::string EnergyLine(const TuneResult& result);

// At --price-per-hour P: "Cost at 2.50 per GPU-hour: recommended 0.330 per million samples (x 2 GPUs); baseline
// 0.500"; "" without a price or a measured trial. Money per million samples = P x GPUs / 3600 / samples/s x 1e6.
std::string CostLine(const TuneResult& result);
// results.json's "cost": {price_per_gpu_hour, baseline, recommended: {per_million_samples, gpus} or null}; null
// without a price.
nlohmann::json CostJson(const TuneResult& result);

// What other hardware would give the recommendation (core/what_if.h), from tune's measurements: full training
// is the confirmation (else the baseline), the compute ceiling the batch step's measurement of the recommended
// batch (else the compute ceiling), the loader the loader trial of the recommended workers (else the loader
// ceiling). The report's section is "" without --what-if.
core::WhatIfInputs TuneWhatIfInputs(const TuneResult& result);
std::string WhatIfSection(const TuneResult& result);

// results.json's "flops": {count (core::FlopsInfoJson of the confirmation, else the baseline), baseline,
// recommended (core::FlopsReadingJson each, null when not measured)}; null when no trial counted FLOPs.
nlohmann::json FlopsJson(const TuneResult& result);

}  // namespace sat::tune
