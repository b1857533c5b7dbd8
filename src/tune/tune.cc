#include "tune/tune.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/log_root.h"
#include "core/session.h"
#include "measure/line_parser.h"
#include "run/environment.h"
#include "run/interrupt.h"
#include "telemetry/sampler.h"
#include "tune/cache.h"
#include "tune/command.h"
#include "tune/compare.h"
#include "tune/trace_run.h"
#include "tune/trial_length.h"
#include "util/redact.h"
#include "util/shell.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

namespace fs = std::filesystem;

// A trial shorter than this measures nothing: the command's start-up alone takes seconds.
constexpr double kMinTrialS = 6;
// Time kept back from each trial's limit for stopping the command (SIGINT, then its shutdown).
constexpr double kStopAllowanceS = 3;

double TrialCap(const TuneOptions& o) {
  if (o.trial_budget_s > 0) return o.trial_budget_s;
  return std::clamp(o.budget_s / 15, 10.0, 60.0);
}

// A --parse pattern that gives steps needs the samples per step from a {batch_size} placeholder or --batch-size.
Status CheckParse(const core::SessionOptions& o, const KnobSpec* batch) {
  if (!o.parse || measure::LineParser::Create(*o.parse, std::nullopt)) return Status::Ok();
  auto with_batch = measure::LineParser::Create(*o.parse, 1.0);
  if (!with_batch) return with_batch.error();
  if (o.batch_size || (batch && batch->delivery == Delivery::kPlaceholder)) return Status::Ok();
  return UsageError(fmt::format("--parse '{}' gives step times, not samples: put a {{batch_size}} placeholder in the "
                                "command (each trial's batch size is then its samples per step), or give "
                                "--batch-size N",
                                *o.parse));
}

std::string StopReason(const TuneResult& r) {
  if (r.interrupted) return "interrupted";
  if (r.search.failed) return "nothing to tune: " + r.search.failure;
  if (r.search.kept_for_confirmation && r.search.confirm_trial) {
    return "the budget left after the search held only the confirmation run, which ran";
  }
  if (r.budget_spent || r.search.stopped) return "the budget ran out before the next trial";
  return fmt::format("stopped early: every step of the {} search ran, so nothing was left to learn ({:.0f}s of the "
                     "{:.0f}s budget unused)",
                     StrategyName(r.strategy), std::max(0.0, r.budget_s - r.wall_s), r.budget_s);
}

}  // namespace

Result<TuneResult> RunTune(const TuneOptions& o, telemetry::GpuBackend* gpu, core::StageRunner* stages) {
  const core::SessionOptions& measured = o.session;
  const std::string parse = measured.parse.value_or("");  // trial keys name no pattern as ""
  TuneResult result;
  result.command = measured.argv;
  result.shell = measured.shell;
  result.strategy = o.strategy;
  result.budget_s = o.budget_s;
  result.mem_target = o.mem_target;
  result.price_per_gpu_hour = o.price_per_gpu_hour;
  result.objective = o.objective;
  result.what_if = o.what_if;
  result.python_dir = run::HelperPythonDir();
  const double entered = telemetry::MonotonicSeconds();

  // One sampler for every trial; each trial watches its own process tree on it.
  // Each trial adds its id and mode to the live figures' labels.
  auto session = core::StartSession({measured, gpu, "tune", std::min(o.budget_s, 4.0 * 3600)});
  if (!session) return session.error();
  telemetry::Sampler& sampler = *session->sampling.sampler;
  const int gpu_index = session->sampling.gpu_index;
  result.machine = session->machine;
  core::SamplerStageRunner real_stages(sampler);
  core::StageRunner& runner = stages ? *stages : real_stages;
  // The budget counts from this call on the monotonic clock (the session's start included); a scripted runner's
  // clock from its first reading.
  const double t0 = stages ? runner.Now() : entered;
  auto elapsed = [&] { return runner.Now() - t0; };
  // What the budget holds for trials once the command's stop is kept back.
  auto left = [&] { return o.budget_s - elapsed() - kStopAllowanceS; };
  const std::string machine_key = result.machine.Fingerprint();
  // Energy per sample is read from the GPU, else the CPU packages (core/energy.h); without either there is
  // nothing to judge trials by.
  if (o.objective == Objective::kEnergy && gpu_index < 0 && !session->sampling.first.host.cpu_energy_j)
    return Error{"--objective energy needs an energy reading: a GPU (NVML's energy counter or power), or the CPU "
                 "packages' RAPL counter (/sys/class/powercap/intel-rapl:N/energy_uj), and this machine offers "
                 "neither to saturate"};

  auto knobs = ResolveKnobs(o.knob_flags, measured.argv, MachineFacts{result.machine.usable_cores, result.machine.gpu_index >= 0});
  if (!knobs) return knobs.error();
  const KnobSpec* batch_knob = FindRole(*knobs, KnobRole::kBatchSize);
  if (Status st = CheckParse(measured, batch_knob); !st) return st.error();

  // No place for the cache is no reason not to tune: trials are then measured and not kept, and the report says so.
  std::unique_ptr<TrialCache> cache;
  std::optional<std::string> no_cache;
  if (auto path = o.cache_path.empty() ? DefaultCachePath() : Result<std::string>(o.cache_path); path) {
    result.cache_path = *path;
    auto opened = TrialCache::Open(result.cache_path);
    if (!opened) return opened.error();
    cache = std::move(*opened);
  } else {
    no_cache = path.error().message;
  }

  // Trial logs go under --out, or a temporary folder that is removed at the end.
  auto logs = core::LogRoot::Create(o.out_dir, "trials", "tune");
  if (!logs) return logs.error();
  const std::string log_root = logs->path();

  const core::StageOptions& base = session->base;
  const std::optional<double> host_mem =
      result.machine.mem_total_bytes ? std::optional<double>(static_cast<double>(*result.machine.mem_total_bytes))
                                     : std::nullopt;
  // Shown by the cache, so redacted; a --shell command line as written, other commands as a shell reads them back.
  const std::vector<std::string> shown = RedactCommand(measured.argv, measured.shell);
  const std::string command_text = measured.shell ? JoinNonEmpty(shown, " ") : ShellJoin(shown);
  std::vector<std::string> knob_order;
  for (const auto& k : *knobs) knob_order.push_back(k.name);

  const MeasureSetup setup{base.auto_instrument, measured.samples_per_step, measured.batch_size};
  const CommandIdentity identity = IdentifyCommand(measured.argv, measured.shell);
  double cap = TrialCap(o);
  std::vector<std::string> length_notes;  // trials made longer, or too slow to measure
  // The training DataLoader the first trial found: later trials inject into it and take it over by its key.
  std::string auto_target;

  std::optional<Error> own_error;
  TrialFn run_trial = [&](int id, const TrialRequest& req) -> std::optional<Trial> {
    if (run::Interrupted()) return std::nullopt;
    const double started_s = elapsed();
    const std::string key = TrialKey(measured.argv, measured.shell, parse, req, setup, identity);

    // A trial measured before on this machine is taken as it was.
    if (!o.fresh && cache) {
      auto found = cache->Find(key, machine_key);
      if (!found) {
        own_error = found.error();
        return std::nullopt;
      }
      if (*found) {
        ApplyObjective(**found, o.objective);
        ++result.trials_cached;
        if (auto_target.empty()) auto_target = (*found)->loader_key;
        if (o.on_event) {
          TrialEvent done{false, id, &req, &**found, 0, started_s, o.budget_s, &knob_order, ""};
          o.on_event(done);
        }
        return std::move(**found);
      }
    }
    core::StageOptions stage = base;
    RenderedRun rendered = RenderRun(measured.argv, *knobs, req.knobs, req.flags);
    stage.argv = rendered.argv;
    for (const auto& [k, v] : rendered.env) stage.env[k] = v;
    // A step-time pattern's samples per step: this trial's batch size, else --batch-size.
    if (measured.parse) {
      stage.batch_size = measured.batch_size;
      if (rendered.batch_size) stage.batch_size = static_cast<double>(*rendered.batch_size);
    }
    stage.log_dir = (fs::path(log_root) / fmt::format("{:03d}-{}", id, core::StageName(req.mode))).string();
    stage.live_labels = {
        {"command", "tune"}, {"trial", std::to_string(id)}, {"stage", std::string(core::StageName(req.mode))}};

    // Measure; a trial too short for its steps runs once more with a longer cap, when the budget holds it.
    Trial trial;
    double budget = 0;
    for (int attempt = 0;; ++attempt) {
      const double now = elapsed();
      budget = std::min(cap, o.budget_s - now - kStopAllowanceS);
      if (budget < kMinTrialS) {
        result.budget_spent = true;
        return std::nullopt;
      }
      if (o.on_event) o.on_event(TrialEvent{true, id, &req, nullptr, budget, now, o.budget_s, &knob_order, ""});
      stage.budget_s = budget;
      stage.auto_target = auto_target;
      const double started_unix = static_cast<double>(std::time(nullptr));
      auto measured = runner.Run(req.mode, stage);
      if (!measured) {
        own_error = measured.error();
        return std::nullopt;
      }
      trial = TrialFromStage(*measured, *knobs, host_mem);
      // Torch loaded means "still starting" only where the instrumentation could report (not --no-auto, --parse).
      if (!stage.auto_instrument) trial.torch_loaded = false;
      trial.id = id;
      trial.request = req;
      trial.started_unix = started_unix;
      trial.interrupted = run::Interrupted();
      ++result.trials_run;
      if (auto_target.empty()) auto_target = trial.loader_key;
      if (!TooShort(trial, budget)) break;

      LengthPlan plan = PlanLength(trial, budget, left(), attempt == 0, o.trial_budget_s > 0);
      length_notes.push_back(plan.note);
      if (!plan.again) {
        trial.too_slow = true;
        break;
      }
      cap = plan.cap_s;
      if (o.on_event)
        o.on_event(TrialEvent{false, id, &req, &trial, budget, elapsed(), o.budget_s, &knob_order,
                              fmt::format("too few steady steps: again, up to {:.0f}s", cap)});
    }
    if (cache && !trial.interrupted && !trial.too_slow) {
      if (Status st = cache->Put(key, machine_key, command_text, trial); !st) {
        own_error = st.error();
        return std::nullopt;
      }
    }
    ApplyObjective(trial, o.objective);
    if (o.on_event)
      o.on_event(TrialEvent{false, id, &req, &trial, budget, elapsed(), o.budget_s, &knob_order,
                            trial.too_slow ? "too slow to measure in this budget" : ""});
    return trial;
  };

  SearchOptions search;
  search.knobs = *knobs;
  search.strategy = o.strategy;
  search.gpu = gpu_index >= 0;
  search.mem_target = o.mem_target;
  search.tolerance = o.tolerance;
  search.objective = o.objective;
  search.batch_multiple = o.batch_multiple;
  search.back_to_back = o.back_to_back;
  // The confirmation needs one trial of the current length: once the budget left holds no more than that and one
  // more, the search stops and confirms.
  search.keep_for_confirmation = [&] { return left() < 2 * cap + kStopAllowanceS; };
  // The plan counts the budget left in trials of the length they have taken (the cap until one has run).
  search.budget_left_s = left;
  search.trial_s = cap;
  search.on_plan = o.on_plan;
  result.search = RunSearch(search, run_trial);
  // Stopping to keep the confirmation's share is the budget ending the search too.
  if (result.search.kept_for_confirmation) result.budget_spent = true;
  // --trace: the recommendation once more, in a run of its own, for a profiler trace of its steady steps.
  if (o.trace && !own_error) {
    result.trace = TraceRecommendation(base, measured.argv, result.search, core::TracePath(o.out_dir, "tune"), auto_target,
                                       runner, (fs::path(log_root) / "trace").string());
  }
  sampler.Stop();
  if (own_error) return *own_error;

  result.interrupted = run::Interrupted();
  result.wall_s = elapsed();
  result.needs = NeedsOf(result.search);
  result.stop_reason = StopReason(result);
  for (auto& note : length_notes) result.search.warnings.push_back(std::move(note));
  if (no_cache) result.search.warnings.push_back(*no_cache);
  // The knobs as the search left them: injected ones are a code change, not part of the command.
  std::vector<KnobSpec> final_knobs;
  for (const auto& k : result.search.knobs) final_knobs.push_back(k.spec);
  if (!result.search.recommended.empty()) {
    result.recommended_command =
        PasteableCommand(measured.argv, measured.shell, final_knobs, result.search.recommended, result.python_dir);
    result.code_changes = CodeChanges(result.search, result.search.recommended, gpu_index >= 0);
  }
  if (!result.search.fastest.empty())
    result.fastest_command = PasteableCommand(measured.argv, measured.shell, final_knobs, result.search.fastest, result.python_dir);
  return result;
}

}  // namespace sat::tune
