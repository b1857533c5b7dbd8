// `saturate simulate`'s entry points: run a list of training runs through a policy on a modelled cluster
// (sim/model.h) and report makespan, GPU-hours, occupancy and OOM events.
//
// Deterministic: the same config, runs, policy and params give the same result, bit for bit. Each call
// is independent and uses only its arguments, so calls may run on different threads.
#pragma once

#include <vector>

#include "sim/model.h"
#include "sim/policy.h"
#include "util/result.h"

namespace sat::sim {

// Simulates `policy` until every run has finished. Usage errors for an invalid config, run or knob; every
// run completes when those are valid (runs that run out of memory are retried until they fit).
Result<PolicyResult> Simulate(const SimConfig& config, const std::vector<SimRun>& runs, Policy policy,
                              const PolicyParams& params);

// Simulate for each policy in turn, results in the same order.
Result<std::vector<PolicyResult>> SimulateAll(const SimConfig& config, const std::vector<SimRun>& runs,
                                              const std::vector<Policy>& policies, const PolicyParams& params);

}  // namespace sat::sim
