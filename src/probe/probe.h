// `saturate probe`: loader-only, compute-only and full measurements of a training command, and the verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/data_location.h"
#include "probe/machine.h"
#include "probe/stage.h"
#include "probe/trace_summary.h"
#include "probe/verdict.h"
#include "probe/what_if.h"
#include "telemetry/gpu.h"

namespace sat::probe {

struct ProbeResult {
  std::vector<std::string> command;
  Machine machine;
  double budget_s = 0, wall_s = 0;
  double target_rel_half_width = 0.02;       // --target: the interval each stage's estimate aimed for
  bool helper = false;                       // the script reports over the helper channel: explicitly or automatically
  bool auto_instrumented = false;            // ... through the automatic instrumentation (no `import saturate`)
  bool auto_enabled = true;                  // the automatic instrumentation was on (off with --no-auto or --parse)
  bool parse = false;                        // --parse: the pattern is the only source of throughput
  bool interrupted = false;                  // Ctrl-C: the stages measured so far are kept
  StageResult loader, compute, full;         // a stage that did not run has ran == false
  std::vector<DataLocation> data_locations;  // where the files the run read live
  Verdict verdict;
  // Without --out: the temporary folder of the stages' logs, kept because the run failed; empty when it was
  // removed (a probe that did not fail leaves nothing behind) or with --out.
  std::string kept_log_dir;
  // --trace: the full stage's profiler trace, its summary or why there is none; absent without --trace.
  std::optional<TraceOutcome> trace;
  std::optional<double> price_per_gpu_hour;  // --price-per-hour, as given
  std::vector<WhatIfTarget> what_if;         // --what-if: the GPUs to estimate (what_if.h); empty: no section
};

struct ProbeOptions {
  std::vector<std::string> argv;
  bool shell = false;
  double budget_s = 120;
  int gpu_index = -1;                        // --device N; -1: the first GPU when there is one
  std::optional<std::string> parse;
  std::optional<double> batch_size;
  bool auto_instrument = true;               // false: --no-auto (StageOptions::auto_instrument)
  std::optional<double> samples_per_step;    // --samples-per-step (StageOptions::samples_per_step)
  std::string out_dir;                       // --out: probe.json and the stages' logs; empty: a temporary folder
  bool trace = false;                        // --trace: a profiler trace of the full stage (TracePath)
  bool verbose = false;
  double target_rel_half_width = 0.02;
  std::optional<double> price_per_gpu_hour;  // --price-per-hour: cost lines in the report (energy.h CostOf)
  std::vector<WhatIfTarget> what_if;         // --what-if (ProbeResult::what_if)
  std::string proc_root = "/proc";
  // --serve: every sample and each stage's progress (labels command="probe", stage) go there; not owned.
  monitor::LiveFigures* live = nullptr;
};

}  // namespace sat::probe

namespace sat::probe {

// Runs the stages in order (full first, which tells whether the script reports at all, through `import saturate`
// or the automatic instrumentation; then loader and compute when it does, aimed at the training DataLoader the
// full stage found), within the budget, and decides the verdict. A loader or compute stage that finds no
// DataLoader to take over ends "not run". `gpu` is not owned and may be null (no driver).
// Ctrl-C ends the stage under way; the result keeps what was measured and says interrupted. Without --out the
// logs go to a temporary folder (saturate-probe-XXXXXX under $TMPDIR) that is removed before returning, unless the
// verdict is failed (then ProbeResult::kept_log_dir names it).
// Error only for saturate's own problems (bad --parse, cannot create --out); a failing command is a verdict.
Result<ProbeResult> RunProbe(const ProbeOptions& options, telemetry::GpuBackend* gpu);

// Writes probe.json into `dir` (created).
Status WriteProbeJson(const ProbeResult& result, const std::string& dir);

}  // namespace sat::probe
