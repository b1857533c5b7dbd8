// `saturate probe`'s orchestrator: loader-only, compute-only and full measurements of a training command, in order
// and within a budget, and the verdict. The record it fills is probe_result.h's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/session.h"
#include "core/stage.h"
#include "core/what_if.h"
#include "probe/probe_result.h"
#include "telemetry/gpu.h"

namespace sat::probe {

struct ProbeOptions {
  core::SessionOptions session;              // the command and how it is measured (core/session.h)
  double budget_s = 120;
  std::string out_dir;                       // --out: probe.json, report.html and the stages' logs; empty: a temporary folder
  bool trace = false;                        // --trace: a profiler trace of the full stage (TracePath)
  std::optional<double> price_per_gpu_hour;  // --price-per-hour: cost lines in the report (energy.h CostOf)
  std::vector<core::WhatIfTarget> what_if;   // --what-if (ProbeResult::what_if)
};

// Runs the stages in order (full first, which tells whether the script reports at all, through `import saturate`
// or the automatic instrumentation; then loader and compute when it does, aimed at the training DataLoader the
// full stage found), within the budget, and decides the verdict. A loader or compute stage that finds no
// DataLoader to take over ends "not run". `gpu` is not owned and may be null (no driver).
// Ctrl-C ends the stage under way; the result keeps what was measured and says interrupted. Without --out the
// logs go to a temporary folder (saturate-probe-XXXXXX under $TMPDIR) that is removed before returning, unless the
// verdict is failed (then ProbeResult::kept_log_dir names it).
// Error only for saturate's own problems (bad --parse, cannot create --out); a failing command is a verdict.
// It writes only the stages' logs (and --trace's trace): probe.json and report.html are the caller's to write
// (outputs.h WriteProbeOutputs), from the result.
// `stages` (not owned) runs the stages and keeps the time their budgets are counted on; null: each on a real
// command (core::SamplerStageRunner). Tests give a scripted one.
Result<ProbeResult> RunProbe(const ProbeOptions& options, telemetry::GpuBackend* gpu,
                             core::StageRunner* stages = nullptr);

}  // namespace sat::probe
