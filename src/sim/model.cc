#include "sim/model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace sat::sim {

namespace {

bool Finite(double v) { return std::isfinite(v); }

Status CheckRun(const SimConfig& config, const SimRun& r, size_t index) {
  auto bad = [&](std::string_view what) { return UsageError(fmt::format("run {} ('{}'): {}", index, r.id, what)); };
  if (!Finite(r.duration_s) || r.duration_s <= 0) return bad("duration_s must be > 0");
  if (!Finite(r.mem_gib) || r.mem_gib <= 0) return bad("mem_gib must be > 0");
  if (!Finite(r.peak_gib) || r.peak_gib < r.mem_gib) return bad("peak_gib must be >= mem_gib");
  if (r.peak_gib > config.gpu_mem_gib) {
    return bad(fmt::format("peak_gib {:g} does not fit on a {:g} GiB GPU even alone", r.peak_gib, config.gpu_mem_gib));
  }
  if (!Finite(r.gpu_util) || r.gpu_util <= 0 || r.gpu_util > 1) return bad("gpu_util must be in (0, 1]");
  if (!Finite(r.cpu_cores) || r.cpu_cores < 0) return bad("cpu_cores must be >= 0");
  if (!Finite(r.startup_s) || r.startup_s < 0) return bad("startup_s must be >= 0");
  if (!Finite(r.warmup_s) || r.warmup_s < 0) return bad("warmup_s must be >= 0");
  return Status::Ok();
}

}  // namespace

Status Validate(const SimConfig& config, const std::vector<SimRun>& runs) {
  if (config.gpus < 1) return UsageError("the cluster needs at least 1 GPU");
  if (config.gpus_per_node < 1) return UsageError("gpus per node must be >= 1");
  if (!Finite(config.gpu_mem_gib) || config.gpu_mem_gib <= 0) return UsageError("GPU memory must be > 0 GiB");
  if (!Finite(config.cpu_cores_per_node) || config.cpu_cores_per_node <= 0) {
    return UsageError("CPU cores per node must be > 0");
  }
  if (!Finite(config.gpu_capacity) || config.gpu_capacity <= 0) return UsageError("GPU capacity must be > 0");
  if (!Finite(config.switch_overhead) || config.switch_overhead < 0 || config.switch_overhead >= 1) {
    return UsageError("switch overhead must be in [0, 1)");
  }
  // A zero back-off with a zero start-up would retry a failing run forever within one instant.
  if (!Finite(config.oom_retry_s) || config.oom_retry_s <= 0) return UsageError("OOM retry delay must be > 0 s");
  for (size_t i = 0; i < runs.size(); ++i) {
    if (Status st = CheckRun(config, runs[i], i); !st.ok()) return st;
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
