// `saturate monitor`'s engine: samples the machine (and a watched process tree) on a fixed schedule, adds the
// training rates a command it started reports over the helper channel, and hands each sample to a presenter and
// to the live figures of --serve. The CLI checks the flags, opens the GPUs, the output and the exporter, and calls
// Watch; what Watch returns, the CLI reports.
//
// Threads: Watch runs on the caller's thread; the command it starts has its own supervisor (run/runner.h).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "live/live_figures.h"
#include "monitor/presenter.h"
#include "run/runner.h"
#include "telemetry/gpu.h"
#include "util/result.h"

namespace sat::monitor {

struct WatchOptions {
  double interval_s = 1;  // between samples, > 0 (at least telemetry::Sampler::kMinIntervalS)
  long count = 0;         // stop after this many samples; 0: until the watched tree ends or an interrupt
  std::vector<std::string> command;  // started with the helper and watched until it exits; empty: none
  bool no_auto = false;              // the command without the automatic instrumentation (SATURATE_AUTO=0)
  long pid = 0;                      // > 0: watch the tree rooted at this process (not with `command`)
  std::string proc_root = "/proc", sys_root = "/sys";
  telemetry::GpuBackend* gpu = nullptr;  // not owned; null: no GPU rows
  std::vector<unsigned> gpu_indices;     // empty: every GPU
};

// How the watch ended. `outcome`: the started command's, when there was one.
struct WatchEnd {
  bool interrupted = false;
  std::optional<run::RunOutcome> outcome;
};

// Samples until `o.count` samples, the watched tree's end, or an interrupt; each sample goes to `presenter` (null:
// nothing printed) on `out`, and to `figures` (null: no exporter). The command is stopped before Watch returns.
// Errors: the sampler, the helper channel or the command could not start.
Result<WatchEnd> Watch(const WatchOptions& o, Presenter* presenter, std::ostream& out, live::LiveFigures* figures);

}  // namespace sat::monitor
