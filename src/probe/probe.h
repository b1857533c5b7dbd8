// `saturate probe`: loader-only, compute-only and full measurements of a training command, and the verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/data_location.h"
#include "core/machine.h"
#include "core/session.h"
#include "core/stage.h"
#include "core/trace_summary.h"
#include "probe/storage.h"
#include "probe/verdict.h"
#include "probe/what_if.h"
#include "telemetry/gpu.h"

namespace sat::probe {

struct ProbeResult {
  std::vector<std::string> command;
  core::Machine machine;
  double budget_s = 0, wall_s = 0;
  double target_rel_half_width = 0.02;       // --target: the interval each stage's estimate aimed for
  bool helper = false;                       // the script reports over the helper channel: explicitly or automatically
  bool auto_instrumented = false;            // ... through the automatic instrumentation (no `import saturate`)
  bool auto_enabled = true;                  // the automatic instrumentation was on (off with --no-auto or --parse)
  bool parse = false;                        // --parse: the pattern is the only source of throughput
  bool interrupted = false;                  // Ctrl-C: the stages measured so far are kept
  core::StageResult loader, compute, full;         // a stage that did not run has ran == false
  std::vector<core::DataLocation> data_locations;  // where the files the run read live
  StorageFindings storage;                         // its data files, page cache, fetch vs prep, local copy, writes
  Verdict verdict;
  // Without --out: the temporary folder of the stages' logs, kept because the run failed; empty when it was
  // removed (a probe that did not fail leaves nothing behind) or with --out.
  std::string kept_log_dir;
  // --trace: the full stage's profiler trace, its summary or why there is none; absent without --trace.
  std::optional<core::TraceOutcome> trace;
  std::optional<double> price_per_gpu_hour;  // --price-per-hour, as given
  std::vector<WhatIfTarget> what_if;         // --what-if: the GPUs to estimate (what_if.h); empty: no section
};

struct ProbeOptions {
  core::SessionOptions session;              // the command and how it is measured (core/session.h)
  double budget_s = 120;
  std::string out_dir;                       // --out: probe.json, report.html and the stages' logs; empty: a temporary folder
  bool trace = false;                        // --trace: a profiler trace of the full stage (TracePath)
  std::optional<double> price_per_gpu_hour;  // --price-per-hour: cost lines in the report (energy.h CostOf)
  std::vector<WhatIfTarget> what_if;         // --what-if (ProbeResult::what_if)
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
// `stages` (not owned) runs the stages and keeps the time their budgets are counted on; null: each on a real
// command (core::SamplerStageRunner). Tests give a scripted one.
Result<ProbeResult> RunProbe(const ProbeOptions& options, telemetry::GpuBackend* gpu,
                             core::StageRunner* stages = nullptr);

// Writes probe.json into `dir` (created).
Status WriteProbeJson(const ProbeResult& result, const std::string& dir);

}  // namespace sat::probe
