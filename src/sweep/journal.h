// The sweep journal: an SQLite file holding a sweep's plan and every state change, so that `--resume` loses
// nothing.
//
// Durability: WAL mode, synchronous=FULL, foreign keys on, a busy timeout for a second reader (`saturate
// sweep status`). Every state change is one transaction, so a kill -9 at any instant leaves either the state
// before or the state after it. Invariants (Verify checks them):
//   - a run's `attempts` equals its number of attempt rows, and `failures` <= `attempts`;
//   - a run is `running` exactly when it has one attempt without an end; other runs have none;
//   - a `done` run's last attempt ended `finished` or `stopped_early`.
//
// Run states: queued -> running -> done (finished, or stopped early by Hyperband) | failed | retrying (queued again
// after a failure, counted against the retry budget) | queued (stopped, interrupted, or out of memory while packed
// with other runs: not the run's fault, not counted).
//
// Each attempt records its owner, the saturate process that started it (pid, start time, boot id), so that a
// resume can tell an attempt whose owner died (requeue it) from one still being run by a live saturate
// (refuse to resume).
//
// Threads: a Journal may be used from several threads; calls are serialised. Several processes may open the
// same file; SQLite's locking keeps each transaction whole.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run/exit_class.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

enum class RunState { kQueued, kRunning, kDone, kFailed, kRetrying };
std::string_view RunStateName(RunState s);  // "queued", "running", "done", "failed", "retrying"

// What one attempt measured; unset fields were not measured.
struct Measurements {
  std::optional<double> throughput_samples_per_s;
  std::optional<uint64_t> peak_gpu_memory_bytes;
  std::optional<double> cpu_pct;  // 100 = one core busy
  std::optional<uint64_t> rss_bytes;
};

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
  std::string slurm_request;  // JSON of what the job asked Slurm for (sweep/right_size.h); empty when local
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

struct RetryPolicy {
  int retries = 2;  // how many failed attempts of a run are tried again
};

// The state a run moves to after an attempt ended with `c`, when `failures_before` earlier attempts failed:
//   finished -> done;
//   stopped -> queued (saturate stopped it, e.g. on an interrupt: not a failure, it runs again);
//   start_failed -> failed (the same command would fail the same way; StateAfterOutcome retries a transient one);
//   failed, gpu_oom, host_oom, worker_killed -> retrying while failures stay within policy.retries, else failed.
RunState StateAfterAttempt(run::ExitClass c, int failures_before, const RetryPolicy& policy);

// Whether an attempt ending with `c` counts against the retry budget.
bool CountsAsFailure(run::ExitClass c);

// The state a run moves to after `outcome`: done when stopped early, queued for an out-of-memory failure while
// packed, else StateAfterAttempt; and whether the attempt counts against the retry budget.
RunState StateAfterOutcome(const AttemptOutcome& outcome, int failures_before, const RetryPolicy& policy);
bool CountsAsFailure(const AttemptOutcome& outcome);

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

class Journal {
 public:
  // Opens or creates the file, and creates or migrates the schema. Errors for a file that is not a journal,
  // a journal from a newer saturate, or a file system without WAL support.
  static Result<std::unique_ptr<Journal>> Open(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const;

  // Records the sweep and its planned runs, or, for a journal that has them, checks that they are the same:
  // a different spec hash is an error (exit code 2) naming both hashes. Updates the spec path and the metric
  // (a resume may move the file or change the metric's goal). Idempotent; one transaction.
  Status EnsureRuns(const SweepInfo& sweep, const std::vector<RunParams>& runs);

  // The sweep recorded by EnsureRuns; nullopt for a new journal.
  Result<std::optional<SweepInfo>> Sweep() const;

  Result<std::vector<RunRecord>> Runs() const;  // by index
  Result<std::optional<RunRecord>> Run(std::string_view key) const;
  // The queued or retrying run with the lowest index; nullopt when none is left.
  Result<std::optional<RunRecord>> NextQueued() const;
  Result<StateCounts> Counts() const;
  Result<std::vector<AttemptRecord>> Attempts(std::string_view run_key) const;  // by attempt number
  Result<std::vector<MetricPoint>> Metrics(std::string_view run_key) const;     // in the order reported
  // The metric points of the run's latest ended attempt, in the order reported; empty when none ended.
  Result<std::vector<MetricPoint>> LastAttemptMetrics(std::string_view run_key) const;

  // Gives a run planned without values (params null, method bayes) the values it will run with, before its
  // first attempt. Error for a run that has values already.
  Status SetParams(std::string_view run_key, const nlohmann::json& params);

  // Starts an attempt of a queued or retrying run: marks it running and counts the attempt, in one
  // transaction. `pid` is the run's process (0 if not known yet). Returns the attempt's id.
  Result<int64_t> BeginAttempt(std::string_view run_key, std::optional<int> gpu_index, pid_t pid,
                               std::string_view log_dir);

  // Ends a running attempt: records the outcome, its metric points and measurements, and moves the run on
  // (StateAfterOutcome), in one transaction. Returns the run's new state. A failure that would be retried but
  // repeats the previous attempt's (SameFailureAgain, sweep/retry.h) fails the run instead, and the attempt's
  // detail ends with the reason.
  Result<RunState> EndAttempt(int64_t attempt_id, const AttemptOutcome& outcome,
                              const std::vector<MetricPoint>& metrics, const Measurements& measurements,
                              const RetryPolicy& policy);

  // For a resume: every attempt without an end whose owner is gone (exited, or the machine rebooted) is marked
  // "interrupted" and its run queued again; done and failed runs are untouched. Attempts of this process are
  // left alone. Error (exit code 2) when a live saturate process still owns an attempt. Returns how many runs
  // were requeued.
  Result<int> RequeueInterrupted();

  // The Slurm backend: records the job an attempt was submitted as, and its request (JSON).
  Status SetSlurmJob(int64_t attempt_id, std::string_view job_id, std::string_view request_json);

  // The Slurm backend's resume: every attempt without an end (its job may still be queued or running) is taken
  // over by this process and returned, by run key and attempt number. Error (exit code 2) when a live saturate
  // process still owns one.
  Result<std::vector<AttemptRecord>> AdoptOpenAttempts();

  // Checks SQLite's integrity and the invariants above; the error lists what is wrong.
  Status Verify() const;

  class Db;  // the connection and its statements, private to journal.cc

 private:
  explicit Journal(std::unique_ptr<Db> db);
  std::unique_ptr<Db> db_;
};

// Results for a report, best first: runs with the metric ordered by it (by `metric`'s goal, ties by index),
// then the rest by index. Without a metric, by index.
std::vector<RunRecord> SortByMetric(std::vector<RunRecord> runs, const std::optional<MetricSpec>& metric);

// One row per run, in the given order: rank, key, index, state, attempts, the sweep metric, param.NAME per
// parameter, metric.NAME per other metric, the measurements, gpu, started_unix, finished_unix. RFC 4180
// quoting; empty cells for missing values; parameter values as the command line gets them (PyStr).
std::string ResultsCsv(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric);

// {"metric": {"name", "goal"} | null, "runs": [{"rank", "key", "index", "state", "stopped_early", "attempts",
//  "failures", "params", "metrics", "throughput_samples_per_s", "peak_gpu_memory_bytes", "cpu_pct", "rss_bytes", "gpu",
//  "started_unix", "finished_unix"}]}, nulls for missing values.
nlohmann::json ResultsJson(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric);

}  // namespace sat::sweep
