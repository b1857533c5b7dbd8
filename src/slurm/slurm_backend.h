// `saturate sweep --slurm` (or `saturate: {backend: slurm}`): the same sweep specs, journal, retry rule and
// bayes proposals as the local controller (sweep/controller.h), with Slurm deciding where and when each run
// goes. saturate does not schedule across machines: it submits, sizes and watches.
//
// Data flow (one loop on the caller's thread, every saturate.slurm.poll):
//   journal (SQLite, on this machine only) ── queued runs ──> requests (slurm/right_size.h) ──> sbatch
//        ▲                                                     (runs of one request: one job array)
//        │ EndAttempt                        each job: `saturate sweep run-one <attempt>/job.json` on a node
//        │                                   (slurm/node_wrapper.h) writes started/footprint/outcome.json
//   Reconcile (slurm/reconcile.h) <── outcome files + squeue + scontrol (once a job left the queue)
//
// Right-sizing: the first saturate.slurm.probes runs of each shape (saturate.shape) ask for the spec's request (a
// whole GPU where the partition has GPUs); once one of them is measured (its footprint.json, written when its
// usage is steady), the shape's other runs ask for what it used with a margin. A run that ran out of memory under
// a sized request is requeued without counting as a failure and asks for twice the memory.
//
// Nothing lost: every attempt is begun in the journal before sbatch and gets its job id right after; a crash
// between the two is recovered from the job's comment (the attempt ids) in squeue, or from the started file.
// `--resume` adopts the attempts a dead saturate left open and reconciles them with what their jobs did
// meanwhile. On an interrupt, the jobs in flight are cancelled when the caller says so (their runs stay queued),
// else left to Slurm for a later --resume.
//
// Threads: the caller's only. Processes: Slurm's client commands, one at a time (slurm/cli.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "sweep/backend.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::slurm {

struct SlurmSweepOptions {
  std::string journal_path;  // required; on this machine (SQLite is not safe on network filesystems)
  std::string log_dir;       // required; the sweep folder the nodes write to: must be shared with them
  bool resume = false;
  std::optional<uint64_t> seed;
  std::string saturate_binary;  // the saturate every job runs (absolute; the nodes must see it)
  double warmup_s = 0, window_s = 0;  // for each run's measurement; 0: the device kind's default
  // On an interrupt: cancel the jobs in flight without asking (--cancel), else ask `confirm_cancel` (null: leave
  // them running).
  bool cancel_on_interrupt = false;
  std::function<bool(size_t jobs)> confirm_cancel;
  double grace_s = 10;  // how long an ended job's outcome file may take to show
  std::function<void(const sweep::SweepEvent&)> on_event;  // on the caller's thread
};

// Runs the sweep on Slurm until every run is done or failed, or until an interrupt. Errors: those of
// OpenSweepJournal; no Slurm commands on PATH; a partition or GRES the cluster lacks; an sbatch rejection (with
// sbatch's message); a job that could not see the sweep folder; a journal still in use by a live saturate.
Result<sweep::SweepResult> RunSlurmSweep(const sweep::Spec& spec, const SlurmSweepOptions& options);

// The job name every job of the sweep with this journal carries: "sat-" and 12 hex digits of the journal's
// absolute path.
std::string SlurmJobName(const std::string& journal_path);

}  // namespace sat::slurm
