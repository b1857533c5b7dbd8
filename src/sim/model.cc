#include "sim/model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "util/range.h"

namespace sat::sim {

namespace {

Status CheckRun(const SimConfig& config, const SimRun& r, size_t index) {
  const std::string run = fmt::format("run {} ('{}'): ", index, r.id);
  if (Status s = CheckAllInRange({{"duration_s", r.duration_s, Above(0)},
                                  {"mem_gib", r.mem_gib, Above(0)},
                                  {"peak_gib", r.peak_gib, AtLeast(r.mem_gib), "its mem_gib"}},
                                 run);
      !s) {
    return s;
  }
  if (r.peak_gib > config.gpu_mem_gib) {
    return UsageError(fmt::format("{}peak_gib {:g} does not fit on a {:g} GiB GPU even alone", run, r.peak_gib,
                                  config.gpu_mem_gib));
  }
  return CheckAllInRange({{"gpu_util", r.gpu_util, LeftOpen(0, 1)},
                          {"cpu_cores", r.cpu_cores, AtLeast(0)},
                          {"startup_s", r.startup_s, AtLeast(0)},
                          {"warmup_s", r.warmup_s, AtLeast(0)}},
                         run);
}

}  // namespace

Status Validate(const SimConfig& config, const std::vector<SimRun>& runs) {
  // A zero back-off with a zero start-up would retry a failing run forever within one instant: oom_retry_s > 0.
  if (Status s = CheckAllInRange({{"GPUs", static_cast<double>(config.gpus), AtLeast(1)},
                                  {"GPUs per node", static_cast<double>(config.gpus_per_node), AtLeast(1)},
                                  {"GPU memory (GiB)", config.gpu_mem_gib, Above(0)},
                                  {"CPU cores per node", config.cpu_cores_per_node, Above(0)},
                                  {"GPU capacity", config.gpu_capacity, Above(0)},
                                  {"switch overhead", config.switch_overhead, RightOpen(0, 1)},
                                  {"OOM retry delay (s)", config.oom_retry_s, Above(0)}});
      !s) {
    return s;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (Status st = CheckRun(config, runs[i], i); !st) return st;
  }
  return Status::Ok();
}

double GpuShareFactor(double sum_util, int n, double capacity, double switch_overhead) {
  double share = sum_util > capacity ? capacity / sum_util : 1.0;
  return share * std::pow(1.0 - switch_overhead, std::max(0, n - 1));
}

double HostCpuFactor(double cores_wanted, double cores_available) {
  return cores_wanted > cores_available ? cores_available / cores_wanted : 1.0;
}

}  // namespace sat::sim
