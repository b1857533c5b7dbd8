// The plain records of a sweep: runs, attempts, how an attempt ended, what it measured, and the wall clock their
// time stamps use. The journal (sweep/journal.h) stores them; the controller, the Slurm backend, the live view and
// the exports read them. Plain data, no I/O.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "run/exit_class.h"
#include "sweep/spec.h"

namespace sat::sweep {

enum class RunState { kQueued, kRunning, kDone, kFailed, kRetrying };
std::string_view RunStateName(RunState s);  // "queued", "running", "done", "failed", "retrying"

// What one attempt measured; unset fields were not measured.
struct Measurements {
  std::optional<double> throughput_samples_per_s;
  std::optional<uint64_t> peak_gpu_memory_bytes;
  std::optional<double> cpu_pct;  // 100 = one core busy
  std::optional<uint64_t> rss_bytes;
  // The attempt's share of its device's energy (sweep/energy_ledger.h: a GPU's, or the CPU packages' for a CPU
  // run), start-up included; unset when the device reports no energy.
  std::optional<double> energy_j;
  std::optional<double> samples;  // samples the attempt trained, over all its processes (helper reports)
};

// The attempt's joules per sample trained, start-up included: what a sample cost; nullopt without both.
std::optional<double> JoulesPerSample(const Measurements& m);

// Seconds since the Unix epoch (wall clock): the time stamps of journal rows and metric points.
double NowUnix();

struct MetricPoint {
  std::string name;
  double value = 0;
  std::optional<int64_t> step;
  double time_unix = 0;  // wall clock, seconds since the epoch
};

struct RunRecord {
  std::string key;
  int64_t index = 0;
  nlohmann::json params;  // object: parameter name -> value
  RunState state = RunState::kQueued;
  int attempts = 0;  // attempts begun
  int failures = 0;  // attempts that counted against the retry budget
  // Per metric name of the latest ended attempt: the best value by the sweep's goal for the sweep's metric,
  // the last reported value for the others. An empty object until an attempt reports metrics.
  nlohmann::json best_metrics = nlohmann::json::object();
  Measurements measurements;                          // of the latest ended attempt
  std::optional<int> gpu_index;                       // of the latest attempt
  std::optional<double> started_unix, finished_unix;  // of the latest attempt; finished only once it ended
  bool stopped_early = false;  // done because early termination (Hyperband) stopped its latest attempt
};

struct AttemptRecord {
  int64_t id = 0;
  std::string run_key;
  int attempt_no = 0;  // 1-based per run
  double started_unix = 0;
  std::optional<double> ended_unix;
  std::string exit_class;  // run::ExitClassName, or "interrupted" (requeued on resume); empty while running
  std::optional<int> exit_code, term_signal;
  std::string detail, log_dir;
  std::string error_line;  // what the retry rule compares (sweep/retry.h); empty when the rule does not apply
  std::optional<int> gpu_index;
  pid_t pid = 0;  // the run's process; 0 when unknown
  pid_t owner_pid = 0;
  uint64_t owner_start_ticks = 0;
  std::string owner_boot_id;
  std::string slurm_job;      // the Slurm job id ("1234", or "1234_5" in an array); empty for a local attempt
  std::string slurm_request;  // JSON of what the job asked Slurm for (slurm/right_size.h); empty when local
  std::optional<double> energy_j;  // Measurements::energy_j of an ended attempt
};

// How an attempt ended, from run::RunOutcome.
struct AttemptOutcome {
  run::ExitClass exit_class = run::ExitClass::kFailed;
  int exit_code = -1;   // -1 when killed by a signal or never started
  int term_signal = 0;  // 0 when it exited
  std::string detail;
  // The run shared its device with other runs when it ran out of memory (gpu_oom, host_oom): the packing's
  // fault, not the run's. It is queued again and the attempt does not count against its retries.
  bool oom_while_packed = false;
  // It could not start for want of a resource (start_failed; run::RunOutcome::start_transient): retried like a
  // failure, where a command that cannot start at all fails at once.
  bool start_transient = false;
  // Early termination stopped it (exit class kStopped): the run is done, recorded as "stopped_early".
  bool stopped_early = false;
  std::string error_line;  // LastErrorLine of the command's output (sweep/retry.h)
};

// The sweep a journal belongs to.
struct SweepInfo {
  std::string spec_path;
  std::string spec_hash;  // SpecHash(spec, seed)
  uint64_t seed = 0;      // what ExpandRuns was given; a resume expands with the same seed
  std::optional<MetricSpec> metric;
};

struct StateCounts {
  int64_t queued = 0, running = 0, done = 0, failed = 0, retrying = 0;
  int64_t total() const { return queued + running + done + failed + retrying; }
};

}  // namespace sat::sweep
