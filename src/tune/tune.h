// `saturate tune`: search the knobs of a training command for the most throughput, within a time budget, and
// recommend a configuration (see search.h for the steps).
//
// Data flow: options -> machine (sampler's first sample) -> knobs (ResolveKnobs) -> RunSearch, whose trials are
// run here: each first looked up in the cache, else measured with probe::RunStage (helper channel, estimator,
// sampler) and stored -> TuneResult -> results.json, results.csv, report.html (results.h, html_report.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/gpu.h"
#include "tune/explain.h"
#include "tune/machine.h"
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
};

struct TuneOptions {
  std::vector<std::string> argv;
  bool shell = false;
  std::vector<std::string> knob_flags;  // --knob values; empty: the machine's default knobs
  Strategy strategy = Strategy::kGuided;
  double budget_s = 600;                // all trials together
  double trial_budget_s = 0;            // one trial at most; 0: a fifteenth of the budget, 10 to 60 s
  double mem_target = 0.9;
  double tolerance = 0.03;
  int64_t batch_multiple = 1;
  double target_rel_half_width = 0.03;  // a trial stops once its 95% interval is this tight
  int gpu_index = -1;                   // --device N; -1: the first GPU when there is one
  std::string parse;                    // --parse for scripts without the helper; empty: none
  std::optional<double> parse_batch_size;
  std::string out_dir;                  // results.json, results.csv, report.html and trial logs; empty: none kept
  std::string cache_path;               // empty: DefaultCachePath()
  bool fresh = false;                   // do not reuse cached trials (new ones are still stored)
  bool verbose = false;                 // echo the command's output
  std::string proc_root = "/proc";
  std::function<void(const TrialEvent&)> on_event;
};

struct TuneResult {
  std::vector<std::string> command;
  bool shell = false;
  Machine machine;
  Strategy strategy = Strategy::kGuided;
  double budget_s = 0, wall_s = 0;
  double mem_target = 0.9;
  bool interrupted = false;    // Ctrl-C: what was measured is kept
  bool budget_spent = false;   // the search stopped because the budget ran out
  SearchOutcome search;
  std::string recommended_command, fastest_command;  // ready to paste; empty when not determined
  Needs needs;
  int trials_run = 0, trials_cached = 0;
  std::string cache_path;
  std::string python_dir;      // the helper's folder, for pasteable commands
};

// Runs the search. `gpu` is not owned and may be null (no driver). Error only for saturate's own problems (a bad
// --knob, an unusable cache or --out folder, a channel that cannot open); a failing command is in the result.
Result<TuneResult> RunTune(const TuneOptions& options, telemetry::GpuBackend* gpu);

}  // namespace sat::tune
