// `saturate tune`: search the knobs of a training command for the most throughput, within a time budget, and
// recommend a configuration (see search.h for the steps).
//
// Data flow: options -> machine (sampler's first sample) -> knobs (ResolveKnobs) -> RunSearch, whose trials are
// run here: each first looked up in the cache, else measured as a stage of a core::StageRunner (the real one:
// core::RunStage's helper channel, estimator and sampler) and stored -> TuneResult; its caller writes results.json,
// results.csv and report.html from it (results.h WriteOutputs, html_report.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/machine.h"
#include "core/session.h"
#include "core/stage.h"
#include "core/trace_summary.h"
#include "core/what_if.h"
#include "telemetry/gpu.h"
#include "tune/code_change.h"
#include "tune/explain.h"
#include "tune/objective.h"
#include "tune/search.h"
#include "util/result.h"

namespace sat::tune {

// A trial starting or ending, for a live progress line. Called on the thread that called RunTune.
struct TrialEvent {
  bool started = false;         // true: about to run; false: ended (trial set)
  int id = 0;
  const TrialRequest* request = nullptr;
  const Trial* trial = nullptr;  // when ended
  double trial_budget_s = 0;     // the most this trial may take
  double elapsed_s = 0;          // since the tune began
  double budget_s = 0;
  const std::vector<std::string>* knob_order = nullptr;  // the knobs' names in search order
  std::string note;              // when ended: what happens next, e.g. the trial runs again for longer
};

// A trial is shorter than a probe stage: it stops once its 95% interval is within ±3% (probe's: ±2%).
inline core::SessionOptions DefaultTuneSession() {
  core::SessionOptions session;
  session.target_rel_half_width = 0.03;
  return session;
}

struct TuneOptions {
  // The command and how each trial is measured (core/session.h); a trial stops once its 95% interval is as tight
  // as session.target_rel_half_width. A --parse pattern that gives steps takes each trial's batch size as its
  // samples per step when the command has a {batch_size} placeholder, else session.batch_size.
  core::SessionOptions session = DefaultTuneSession();
  std::vector<std::string> knob_flags;  // --knob values; empty: the machine's default knobs
  Strategy strategy = Strategy::kGuided;
  double budget_s = 600;                // all trials together
  double trial_budget_s = 0;            // one trial at most; 0: a fifteenth of the budget, 10 to 60 s
  double mem_target = 0.9;
  std::optional<double> price_per_gpu_hour;  // --price-per-hour: cost lines (flops.h CostLine)
  // --objective: what trials are judged by (objective.h); energy needs a GPU, cost needs price_per_gpu_hour.
  Objective objective = Objective::kThroughput;
  std::vector<core::WhatIfTarget> what_if;  // --what-if: the report's section (flops.h WhatIfSection)
  double tolerance = 0.03;
  int64_t batch_multiple = 1;
  std::string out_dir;                  // trial logs (the caller writes the result's files there); empty: none kept
  bool trace = false;                   // --trace: a profiler trace of the recommendation (trace_run.h)
  std::string cache_path;               // empty: DefaultCachePath(), or no cache where it has no place
  bool fresh = false;                   // do not reuse cached trials (new ones are still stored)
  bool back_to_back = true;             // --back-to-back (search.h SearchOptions::back_to_back)
  std::function<void(const TrialEvent&)> on_event;
  // The guided search's budget plan, said once after the baseline (search.h SearchOptions::on_plan).
  std::function<void(const std::string&)> on_plan;
};

struct TuneResult {
  std::vector<std::string> command;
  bool shell = false;
  core::Machine machine;
  Strategy strategy = Strategy::kGuided;
  double budget_s = 0, wall_s = 0;
  double mem_target = 0.9;
  std::optional<double> price_per_gpu_hour;  // --price-per-hour, as given
  Objective objective = Objective::kThroughput;
  std::vector<core::WhatIfTarget> what_if;  // --what-if, as given
  bool interrupted = false;    // Ctrl-C: what was measured is kept
  bool budget_spent = false;   // the search stopped because the budget ran out
  // Why the tune ended when it did: interrupted, the budget ran out, nothing to tune, or every step ran and
  // nothing was left to learn (with the budget left unused).
  std::string stop_reason;
  SearchOutcome search;
  std::string recommended_command, fastest_command;  // ready to paste; empty when not determined
  std::vector<CodeChange> code_changes;  // the edits that keep the recommendation's injected knobs
  Needs needs;
  int trials_run = 0, trials_cached = 0;
  std::string cache_path;      // "" when there was no place for one (a warning says why)
  std::string python_dir;      // the helper's folder, for pasteable commands
  std::optional<core::TraceOutcome> trace;  // --trace: the recommendation's profiler trace; absent without it
};

// Trial length: each trial runs until its estimate converges or its cap (--trial-budget, else a fifteenth of the
// budget, 10 to 60 s). A trial that reaches its cap with fewer than kMinSteadySteps steady steps
// (compare.h) shows the pace of its steps: when the budget left holds at least three trials of the length that
// pace needs, the cap is raised to it for this and every later trial (fewer, longer trials) and the trial runs
// again; otherwise it is marked too slow to measure in this budget, and no comparison rests on it. An explicit
// --trial-budget is never raised. Neither too-slow trials nor interrupted ones are cached.
//
// With --parse and a pattern that gives steps, a trial's samples per step is its batch-size knob value (a
// {batch_size} placeholder), else --batch-size; a usage error when neither says it.
//
// Runs the search. `gpu` is not owned and may be null (no driver). Error only for saturate's own problems (a bad
// --knob, an unusable cache or --out folder, a channel that cannot open); a failing command is in the result.
// Writes only the trials' logs (and --trace's trace): results.json, results.csv and report.html are the caller's.
// `stages` (not owned) runs the trials (and --trace's run) and keeps the time the budget is counted on; null: each
// on a real command (core::SamplerStageRunner), the budget counted from this call. Tests give a scripted one.
Result<TuneResult> RunTune(const TuneOptions& options, telemetry::GpuBackend* gpu,
                           core::StageRunner* stages = nullptr);

}  // namespace sat::tune
