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

#include "sweep/records.h"
#include "sweep/retry.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

class Journal {
 public:
  // Opens or creates the file, and creates or migrates the schema. Errors for a file that is not a journal,
  // a journal from a newer saturate, or a file system without WAL support.
  static Result<std::unique_ptr<Journal>> Open(const std::string& path);
  // For readers (`sweep status`, `sweep export`, the Slurm report), without the controller's lock: opens an
  // existing journal read-only (SQLite's SQLITE_OPEN_READONLY), so it never writes the file and never migrates
  // it; a journal another user owns and this one may only read is read. A journal at an older schema is read as
  // it is, the fields later versions added unknown (null; "" for texts). Errors for a missing file, a file that
  // is not a journal or holds no sweep (exit code 2), and a journal from a newer saturate.
  static Result<std::unique_ptr<const Journal>> OpenReadOnly(const std::string& path);
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
  Result<StateCounts> Counts() const;
  Result<std::vector<AttemptRecord>> Attempts(std::string_view run_key) const;  // by attempt number
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
  // (StateAfterOutcome, with the run's earlier start failures as its transient ones), in one transaction. Returns the run's new state. A failure that would be retried but
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

}  // namespace sat::sweep
