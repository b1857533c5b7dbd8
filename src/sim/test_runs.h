// Hand-made runs and clusters for the sim tests: start-up, warm-up and host effects off unless a test turns
// them on, so expected results can be worked out on paper.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/model.h"
#include "sim/simulate.h"

namespace sat::sim::testing {

inline SimRun MakeRun(std::string shape, double duration_s, double mem_gib, double gpu_util) {
  SimRun r;
  r.id = shape + "#" + std::to_string(static_cast<int>(duration_s));
  r.shape = std::move(shape);
  r.duration_s = duration_s;
  r.mem_gib = mem_gib;
  r.peak_gib = mem_gib;
  r.gpu_util = gpu_util;
  r.cpu_cores = 1;
  r.startup_s = 0;
  r.warmup_s = 0;
  return r;
}

inline std::vector<SimRun> Repeat(const SimRun& run, int n) { return std::vector<SimRun>(n, run); }

// `gpus` 80-GiB GPUs on one node with plenty of cores, 5% switch overhead, 30 s OOM back-off.
inline SimConfig OneNode(int gpus) {
  SimConfig c;
  c.gpus = gpus;
  c.gpus_per_node = gpus;
  c.gpu_mem_gib = 80;
  c.cpu_cores_per_node = 1000;
  c.gpu_capacity = 1.0;
  c.switch_overhead = 0.05;
  c.oom_retry_s = 30;
  return c;
}

// Simulate, failing the test (and returning an empty result) on an error.
inline PolicyResult Sim(const SimConfig& config, const std::vector<SimRun>& runs, Policy policy,
                        const PolicyParams& params = {}) {
  Result<PolicyResult> r = Simulate(config, runs, policy, params);
  EXPECT_TRUE(r) << r.error().message;
  return r.ok() ? *r : PolicyResult{};
}

}  // namespace sat::sim::testing
