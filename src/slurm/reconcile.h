// What the Slurm backend does with one attempt in flight, decided from what it can see: the outcome file the
// node wrapper wrote (slurm/node_wrapper.h), whether the job is still in squeue, and what scontrol still knows of
// it once it left. Used every poll and on --resume (after a crash of saturate, the jobs went on without it).
//
// Rules, in order:
//   1. an outcome that finished: the run is done, whatever Slurm says;
//   2. an outcome of a run that ended on its own (not signalled): that outcome (a failure is retried by the
//      journal's rule); an out-of-memory failure of a sized request is the request's fault, not the run's
//      (`oom_while_packed`: requeued with a larger request, not counted);
//   3. a job saturate cancelled before it started: stopped (requeued) at once;
//   4. the wrapper was signalled, or there is no outcome: wait while the job is pending or running, and after
//      it left squeue until scontrol's record of it is in (a signalled outcome), or for `grace_s` (no outcome:
//      one written on a network filesystem may show late); then
//      Slurm's final state decides: TIMEOUT -> timed out (retried); PREEMPTED, NODE_FAIL -> stopped (requeued,
//      not counted); OUT_OF_MEMORY -> out of memory (as in 2); CANCELLED by saturate -> stopped; CANCELLED by
//      anyone else -> failed; COMPLETED or FAILED without a started file -> the node never saw the sweep
//      folder (an error for the whole sweep); anything else without an outcome -> failed ("ended without an
//      outcome"); a job Slurm no longer knows that never started -> stopped (requeued).
//
// Pure; no I/O.
#pragma once

#include <optional>
#include <string>

#include "slurm/cli.h"
#include "sweep/node_attempt.h"
#include "sweep/records.h"

namespace sat::slurm {

struct InFlightView {
  std::string job_id;
  bool sized = false;            // the job's request came from measurement
  bool started = false;          // started.json exists
  std::optional<sweep::NodeOutcome> outcome;
  std::optional<QueuedJob> queued;  // the job's line in squeue
  std::optional<JobInfo> info;      // scontrol's record, once the job left squeue
  double gone_s = 0;                // seconds since the job was last seen in squeue (0 while it is there)
  bool cancelled_by_us = false;
};

struct ReconcileDecision {
  enum class Action {
    kWait,             // nothing to do yet
    kEnd,              // end the attempt with `outcome`
    kFolderInvisible,  // the node could not see the sweep folder: stop the sweep with `detail`
  };
  Action action = Action::kWait;
  sweep::AttemptOutcome outcome;
  bool oom = false;  // ran out of memory: its next request is larger
  std::string detail;
};

ReconcileDecision Reconcile(const InFlightView& view, double grace_s);

}  // namespace sat::slurm
