// probe's side of the what-if (core/what_if.h, the model): its inputs read from a probe's stages, machine and
// verdict. Pure.
#pragma once

#include <vector>

#include "core/what_if.h"
#include "probe/probe_result.h"

namespace sat::probe {

// The model's inputs from `result`: each stage's rate where it rests on enough steady data (verdict.h
// EnoughSteadyData), the FLOP count's precision and device (the compute stage's, else the full stage's), the bytes
// per sample the GPU received in full training, the cores the loader stage used, the epoch's samples, this GPU's
// price, and "loader" or "storage" when the verdict names one of them.
core::WhatIfInputs WhatIfInputsOf(const ProbeResult& result);

// core::EstimateWhatIf on WhatIfInputsOf(result).
core::WhatIf EstimateWhatIf(const ProbeResult& result, const std::vector<core::WhatIfTarget>& targets);

}  // namespace sat::probe
