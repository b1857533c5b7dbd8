// Slurm's client commands (sbatch, squeue, scontrol, scancel, sinfo) run as processes, and the pure parsers of
// their output. saturate links no Slurm library: the commands are the stable interface every site has, and they
// carry the site's configuration (SLURM_CONF, auth) as they do for the user.
//
// Formats asked for (so parsing never depends on the site's defaults or column widths):
//   sbatch --parsable                    "1234" or "1234;cluster"
//   squeue -h -r -o '%i|%j|%T|%r|%N|%k' one job (array task) per line: id, name, state, reason, nodes, comment
//   scontrol -o show job ID...           one job per line of Key=Value words
//   sinfo -h -o '%P|%c|%m|%G|%a'         partition (default marked '*'), CPUs, MiB, GRES, availability
//
// SlurmCli's methods block while the command runs (bounded by a time limit) and are not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/right_size.h"
#include "util/result.h"

namespace sat::slurm {

// Slurm's job states (squeue's %T, scontrol's JobState), with the ones saturate treats alike folded together.
enum class JobState {
  kPending,      // PENDING, REQUEUED, REQUEUE_HOLD, REQUEUE_FED, RESV_DEL_HOLD, CONFIGURING
  kRunning,      // RUNNING, COMPLETING, SUSPENDED, STOPPED, SIGNALING, STAGE_OUT, RESIZING
  kCompleted,    // COMPLETED
  kFailed,       // FAILED
  kCancelled,    // CANCELLED (by a user or an administrator)
  kTimeout,      // TIMEOUT, DEADLINE
  kPreempted,    // PREEMPTED
  kNodeFail,     // NODE_FAIL, BOOT_FAIL, LAUNCH_FAILED
  kOutOfMemory,  // OUT_OF_MEMORY
  kUnknown,      // anything else
};
// Reads a state as squeue or scontrol print it ("RUNNING", "CANCELLED+", "CANCELLED by 0").
JobState ParseJobState(std::string_view text);
std::string_view JobStateName(JobState s);  // "pending", "running", "completed", ...
// Pending or running: the job is still Slurm's.
bool JobActive(JobState s);

struct QueuedJob {
  std::string id;  // "1234", or "1234_5" for an array task
  std::string name;
  JobState state = JobState::kUnknown;
  std::string reason, nodes, comment;
};
std::vector<QueuedJob> ParseSqueue(std::string_view text);

// The job id in sbatch --parsable's output; error when there is none.
Result<std::string> ParseSbatchId(std::string_view text);

struct JobInfo {
  std::string id;  // "1234", or "<ArrayJobId>_<ArrayTaskId>" for an array task
  JobState state = JobState::kUnknown;
  std::string reason, nodes;
  std::optional<int> exit_code, term_signal;  // ExitCode=code:signal
  std::optional<int> cpus;                    // NumCPUs
  std::optional<uint64_t> mem_mib;            // MinMemoryNode, or mem= in TRES
  std::string gres;                           // TresPerNode / TresPerJob, without "gres:" ("shard:2")
};
// Key=Value words of one `scontrol -o show` line; a word without '=' belongs to the previous value.
std::map<std::string, std::string> ParseScontrolLine(std::string_view line);
std::vector<JobInfo> ParseScontrolJobs(std::string_view text);

struct PartitionInfo {
  std::string name;
  bool is_default = false, up = true;
  PartitionGres gres;  // the largest node configuration of the partition
};
// "gpu:2,shard:16", "gpu:a100:4(S:0-1),shard:a100:32", "(null)" -> counts per node.
void AddGres(std::string_view text, PartitionGres* gres);
std::vector<PartitionInfo> ParseSinfo(std::string_view text);

// The partition jobs go to: `name`, or the default partition when empty. Usage error naming the partitions
// there are when there is no such partition.
Result<PartitionInfo> ChoosePartition(const std::vector<PartitionInfo>& partitions, const std::string& name);

class SlurmCli {
 public:
  // Finds sbatch, squeue, scontrol, scancel and sinfo on `path_var`. Error naming the first one missing and
  // the package that has them.
  static Result<SlurmCli> Find(const std::string& path_var);

  // sbatch --parsable OPTIONS... SCRIPT: the job id. An sbatch rejection is a usage error carrying sbatch's own
  // message.
  Result<std::string> Submit(const std::vector<std::string>& options, const std::string& script) const;
  // The jobs (array tasks one by one) named `job_name` of the current user.
  Result<std::vector<QueuedJob>> Queue(const std::string& job_name) const;
  // What slurmctld still knows of these jobs (finished jobs for MinJobAge, 300 s by default); unknown ids
  // are left out.
  Result<std::vector<JobInfo>> ShowJobs(const std::vector<std::string>& ids) const;
  Result<std::vector<PartitionInfo>> Partitions() const;
  Status Cancel(const std::vector<std::string>& ids) const;

 private:
  struct Output {
    int exit_code = 0;
    std::string out, err;
  };
  Result<Output> Call(const std::string& program, const std::vector<std::string>& args) const;
  std::map<std::string, std::string> programs_;  // name -> resolved path
};

}  // namespace sat::slurm
