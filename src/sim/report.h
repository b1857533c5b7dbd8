// Presentation of simulation results for the CLI: a fixed-width table and a JSON document. Pure functions of
// their arguments; nothing here prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/policy.h"

namespace sat::sim {

// One row per result, in the given order, then a line per policy with held degrees. The makespan column
// uses one unit (s, min or h) chosen by the longest makespan. "speedup" is the makespan of the `baseline`
// policy's row over each row's; the column is left out when no row has that policy.
std::string FormatTable(const std::vector<PolicyResult>& results, Policy baseline = Policy::kOnePerGpu);

// {"cluster": {gpus, gpus_per_node, gpu_mem_gib, cpu_cores_per_node, gpu_capacity, switch_overhead,
//  oom_retry_s}, "params": {fixed_k, free_fraction, max_runs_per_gpu, margin, min_gain, cpu_limit},
//  "results": [{policy, makespan_s, gpu_hours, mean_occupancy, mean_runs_per_busy_gpu, max_runs_on_a_gpu,
//  oom_events, runs_completed, runs_total, held_degree: {shape: degree}}]}
nlohmann::json ToJson(const SimConfig& config, const PolicyParams& params, const std::vector<PolicyResult>& results);

}  // namespace sat::sim
