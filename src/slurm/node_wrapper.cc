#include "slurm/node_wrapper.h"

#include <fmt/format.h>

#include <cstdlib>

#include "util/host.h"

namespace sat::slurm {

sweep::NodeIdentity SlurmNodeIdentity() {
  sweep::NodeIdentity who;
  const char* array = getenv("SLURM_ARRAY_JOB_ID");
  const char* task = getenv("SLURM_ARRAY_TASK_ID");
  const char* job = getenv("SLURM_JOB_ID");
  who.job_id = array && task ? fmt::format("{}_{}", array, task) : job ? job : "";
  const char* node = getenv("SLURMD_NODENAME");
  who.node = node && *node ? node : sat::HostName();
  return who;
}

ShapeUsage UsageOf(const sweep::NodeOutcome& outcome) {
  ShapeUsage u;
  u.cpu_pct = outcome.measurements.cpu_pct;
  u.rss_bytes = outcome.measurements.rss_bytes;
  u.gpu_mem_bytes = outcome.measurements.peak_gpu_memory_bytes;
  u.gpu_total_bytes = outcome.gpu_total_bytes;
  u.gpu_util_pct = outcome.gpu_util_pct;
  return u;
}

Result<int> RunNodeJob(const std::string& job_path, const sweep::NodeOptions& options) {
  return sweep::RunNodeAttempt(job_path, SlurmNodeIdentity(), options);
}

}  // namespace sat::slurm
