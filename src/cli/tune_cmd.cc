// `saturate tune -- CMD`: search the knobs of a training command for the most throughput and recommend a setting.
#include <fmt/core.h>
#include <unistd.h>

#include <iostream>

#include "cli/command.h"
#include "cli/gpu_setup.h"
#include "cli/measurement_flags.h"
#include "cli/options.h"
#include "cli/serve_flag.h"
#include "run/interrupt.h"
#include "tune/console.h"
#include "tune/results.h"
#include "tune/tune.h"
#include "util/json_text.h"
#include "util/range.h"

namespace sat::cli {
namespace {

struct TuneCliOptions {
  MeasurementFlags m;
  std::vector<std::string> knobs;
  std::string budget = "10m";
  std::string trial_budget;
  double mem_target = 0.9;
  double tolerance = 0.03;
  int64_t batch_multiple = 1;
  double target = 0.03;
  std::string strategy = "guided";
  std::string objective = "throughput";
  std::string out;
  bool json = false;
  std::string cache;
  bool fresh = false;
  bool trace = false;
  std::string back_to_back = "on";
  ServeFlag serve;
};

// The live progress line: on a terminal the running trial's line is rewritten in place when it ends; elsewhere
// each trial gets one line when it ends.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1) {}

  void operator()(const tune::TrialEvent& e) {
    std::string line = tune::ProgressLine(e);
    if (e.started) {
      if (tty_) fmt::print(stderr, "{}", line);
      return;
    }
    fmt::print(stderr, "{}{}\n", tty_ ? "\r\033[K" : "", line);
  }

 private:
  bool tty_;
};

Status RunTuneCommand(const TuneCliOptions& c) {
  if (c.m.command.empty())
    return UsageError("tune needs a training command after --, e.g. saturate tune -- python3 train.py");
  auto budget = DurationFlag("--budget", c.budget, 20);
  if (!budget) return budget.error();
  auto trial_budget = OptionalDurationFlag("--trial-budget", c.trial_budget, 6);
  if (!trial_budget) return trial_budget.error();
  for (const Status& st : {CheckInRange("--mem-target", c.mem_target, LeftOpen(0, 1), "a share of memory: 0.9 = 90%"),
                           CheckInRange("--tolerance", c.tolerance, RightOpen(0, 1), "a share: 0.03 = 3%"),
                           CheckInRange("--target", c.target, Open(0, 1), "a fraction: 0.03 = ±3%"),
                           CheckInRange("--batch-multiple", static_cast<double>(c.batch_multiple), AtLeast(1))}) {
    if (!st) return st;
  }
  auto m = CheckMeasurementFlags(c.m);
  if (!m) return m.error();
  tune::Strategy strategy = tune::Strategy::kGuided;
  if (c.strategy == "grid") strategy = tune::Strategy::kGrid;
  else if (c.strategy != "guided")
    return UsageError(fmt::format("--strategy '{}' is not guided or grid", c.strategy));
  if (c.back_to_back != "on" && c.back_to_back != "off")
    return UsageError(fmt::format("--back-to-back '{}' is not on or off", c.back_to_back));
  const std::optional<tune::Objective> objective = tune::ParseObjective(c.objective);
  if (!objective)
    return UsageError(fmt::format("--objective '{}' is not throughput, energy or cost", c.objective));
  if (*objective == tune::Objective::kCost && !m->price_per_gpu_hour)
    return UsageError("--objective cost needs --price-per-hour: the price of one GPU for an hour, e.g. 2.50");

  auto gpus = OpenGpus(c.m.device >= 0 ? std::to_string(c.m.device) : "");
  if (!gpus) return gpus.error();
  if (!gpus->backend && !c.json) fmt::print(stderr, "saturate: {}; tuning without GPU telemetry\n", gpus->note);

  tune::TuneOptions o;
  o.session = m->session;
  o.session.target_rel_half_width = c.target;
  o.knob_flags = c.knobs;
  o.strategy = strategy;
  o.budget_s = *budget;
  o.trial_budget_s = trial_budget->value_or(0);
  o.mem_target = c.mem_target;
  o.price_per_gpu_hour = m->price_per_gpu_hour;
  o.objective = *objective;
  o.what_if = std::move(m->what_if);
  o.tolerance = c.tolerance;
  o.batch_multiple = c.batch_multiple;
  o.out_dir = c.out;
  o.trace = c.trace;
  o.cache_path = c.cache;
  o.fresh = c.fresh;
  o.back_to_back = c.back_to_back == "on";
  o.on_event = Progress();
  o.on_plan = [](const std::string& plan) { fmt::print(stderr, "plan: {}\n", plan); };

  auto exporter = StartExporter(c.serve);
  if (!exporter) return exporter.error();
  o.session.live = exporter->figures.get();

  run::InstallInterruptHandlers();
  StopRunsOfKilledMeasurements();
  auto result = tune::RunTune(o, gpus->backend.get());
  if (!result) return result.error();
  if (!c.out.empty()) {
    if (Status st = tune::WriteOutputs(*result, c.out); !st) return st;
  }
  if (c.json) {
    std::cout << JsonText(tune::ResultsJson(*result), 2) << '\n';
  } else {
    std::cout << '\n' << tune::ConsoleReport(*result);
    if (!c.out.empty()) std::cout << fmt::format("\nresults.json, results.csv and report.html are in {}\n", c.out);
  }
  std::cout.flush();
  if (result->interrupted) return Error{"interrupted; the report shows what was measured", kExitInterrupted};
  if (result->search.failed) return Error{"nothing to tune: " + result->search.failure, kExitFailure};
  return Status::Ok();
}

}  // namespace

Action SetupTune(CLI::App& app) {
  auto c = std::make_shared<TuneCliOptions>();
  app.add_option("--knob", c->knobs,
                 "a knob and its range: batch_size=16:1024, workers=0:8, amp=off,bf16,fp16, pin_memory=off,on, any "
                 "NAME=LO:HI or NAME=a,b; a known name alone takes its default range. Repeatable; without any, the "
                 "machine's defaults (batch_size, workers, amp, preload; with a GPU also pin_memory and "
                 "expandable_segments). Values reach the script as {NAME} in the command or saturate.knob(NAME); "
                 "a script with neither gets workers, batch_size, pin_memory, prefetch_factor, persistent_workers "
                 "and amp injected into its training DataLoader and forward (the report spells out the code change)")
      ->allow_extra_args(false);
  app.add_option("--budget", c->budget, "total time for all trials (default 10m; e.g. 90s, 30m)");
  app.add_option("--trial-budget", c->trial_budget,
                 "most time for one trial (default: budget/15, 10s to 60s, raised while the budget allows when steps "
                 "are too slow for 30 in a trial; a value given here is never raised)");
  app.add_option("--mem-target", c->mem_target, "largest share of memory a batch may use at peak (default 0.9)");
  app.add_option("--tolerance", c->tolerance,
                 "recommend the smallest batch within this share of the fastest (default 0.03)");
  app.add_option("--batch-multiple", c->batch_multiple, "bisect batch sizes down to multiples of N (default 1)");
  app.add_option("--target", c->target, "stop a trial once its 95% interval is within ±TARGET (default 0.03)");
  app.add_option("--strategy", c->strategy, "guided (default) or grid: every combination, for comparison");
  app.add_option("--objective", c->objective,
                 "throughput (default): the most samples/s; energy: the fewest joules per sample (the GPU's, "
                 "else the CPU packages' by RAPL; a smaller batch may win); cost: the least money per sample at --price-per-hour (on one machine, "
                 "the same choice as throughput)");
  app.add_option("--out", c->out, "write results.json, results.csv, report.html and each trial's logs to DIR");
  app.add_flag("--json", c->json, "print results.json instead of the report");
  app.add_option("--cache", c->cache, "the trial cache (default ~/.cache/saturate/tune.db)");
  app.add_flag("--fresh", c->fresh, "measure every trial again instead of reusing cached ones");
  app.add_option("--back-to-back", c->back_to_back,
                 "on (default): where the machine's speed may move between trials, a decision measures the settings "
                 "it compares with again right after the challenger, while the budget holds the run (two such "
                 "readings that agree show the machine steady, and later decisions rest on one reading each); off: "
                 "one reading each");
  app.add_flag("--trace", c->trace,
               "after the search, run the recommendation once more for a torch.profiler Chrome trace of a few steady "
               "steps (trace.json in --out, else saturate-tune-trace-TIME.json here) and summarise it");
  AddMeasurementFlags(app, c->m,
                      " when the command has no {batch_size} placeholder (with one, each trial's batch size is its "
                      "samples per step)",
                      "the report gives the cost per million samples of the recommendation and the baseline",
                      "what the recommendation would give");
  AddServeFlag(app, c->serve, "the command's process tree and each trial's samples/s");
  return [c] { return RunTuneCommand(*c); };
}

}  // namespace sat::cli
