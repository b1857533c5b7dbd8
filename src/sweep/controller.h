// `saturate sweep`'s engine: runs a sweep's planned runs to the end, packed onto devices by measurement
// (sweep/packing.h), and records every step in the journal (sweep/journal.h), so that a resume after any crash
// finishes the sweep without losing or repeating a run.
//
// One loop on the caller's thread, every tick (SweepOptions::tick_s):
//   read the helper channel (throughput, memory, metrics of every run; messages carry SATURATE_RUN_ID),
//   sample the host and GPUs, read each run's process tree (CPU, RSS, GPU memory per process, whether it loaded
//   torch),
//   stop the runs Hyperband finds behind (spec early_terminate; sweep/hyperband.h),
//   end the attempts whose command ended (journal first, then the policy), tell the policy which runs became
//   measured (and so judge the last admission), and start what the policy admits (a bayes run gets its values,
//   proposed by sweep/bayes.h from the runs finished so far, and journaled, just before its first attempt).
// Devices are the selected GPUs, or without a GPU backend one device, "cpu": the host's cores and RAM.
//
// Processes: every run starts through run::Run (its own process group, PDEATHSIG, the tree stopped as a whole),
// behind sweep/attempt_runner.h's seam with the channel, the sampler and the clock.
// An interrupt of saturate (SIGINT, SIGTERM, SIGHUP; see run/interrupt.h) stops every run and admits no more;
// the loop returns once all are over, with their runs queued again in the journal. A second interrupt kills
// them at once.
#pragma once

#include "sweep/backend.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

// Runs the sweep until no run is queued or running, or until an interrupt. Errors: a journal that cannot be
// opened or belongs to another plan, a journal with attempts and no `resume`, a `shape` name that is not a
// parameter, GPUs asked for that the backend does not have, and failures of saturate's own (channel, logs).
Result<SweepResult> RunSweep(const Spec& spec, const SweepOptions& options);

}  // namespace sat::sweep
