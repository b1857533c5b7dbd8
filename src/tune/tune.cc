#include "tune/tune.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "run/interrupt.h"
#include "telemetry/sampler.h"
#include "tune/cache.h"
#include "tune/command.h"
#include "tune/results.h"

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

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

Result<TuneResult> RunTune(const TuneOptions& o, telemetry::GpuBackend* gpu) {
  TuneResult result;
  result.command = o.argv;
  result.shell = o.shell;
  result.strategy = o.strategy;
  result.budget_s = o.budget_s;
  result.mem_target = o.mem_target;
  result.python_dir = SATURATE_PYTHON_DIR;
  const double t0 = telemetry::MonotonicSeconds();

  // One sampler for every trial; each trial watches its own process tree on it.
  telemetry::SamplerOptions so;
  so.interval_s = 0.25;
  so.capacity = static_cast<size_t>(std::min(o.budget_s, 4.0 * 3600) / so.interval_s) + 400;
  so.roots.proc = o.proc_root;
  so.gpu = gpu;
  int gpu_index = -1;
  if (gpu != nullptr && gpu->DeviceCount() > 0) {
    gpu_index = o.gpu_index >= 0 ? o.gpu_index : 0;
    so.gpu_indices = {static_cast<unsigned>(gpu_index)};
  }
  auto sampler = telemetry::Sampler::Create(so);
  if (!sampler) return sampler.error();
  result.machine = DescribeMachine((*sampler)->SampleOnce(), gpu_index);
  const std::string machine_key = result.machine.Fingerprint();

  auto knobs = ResolveKnobs(o.knob_flags, o.argv, result.machine.Facts());
  if (!knobs) return knobs.error();

  result.cache_path = o.cache_path.empty() ? DefaultCachePath() : o.cache_path;
  auto cache = TrialCache::Open(result.cache_path);
  if (!cache) return cache.error();

  // Trial logs go under --out, or a temporary folder that is removed at the end.
  std::string log_root;
  bool remove_logs = false;
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec) return Error{fmt::format("cannot create --out {}: {}", o.out_dir, ec.message())};
    log_root = (fs::path(o.out_dir) / "trials").string();
  } else {
    std::string tmpl = (fs::temp_directory_path() / "saturate-tune-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Error{fmt::format("cannot create a folder for logs: {}", strerror(errno))};
    log_root = tmpl;
    remove_logs = true;
  }
  if (Status st = (*sampler)->Start(); !st) return st.error();

  probe::StageOptions base;
  base.shell = o.shell;
  if (!o.parse.empty()) base.parse = o.parse;
  base.batch_size = o.parse_batch_size;
  base.verbose = o.verbose;
  base.gpu_index = gpu_index;
  base.estimator.target_rel_half_width = o.target_rel_half_width;
  if (o.gpu_index >= 0) {
    // The command sees only the probed GPU, numbered as NVML numbers it.
    base.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    base.env["CUDA_VISIBLE_DEVICES"] = std::to_string(o.gpu_index);
  }
  const std::optional<double> host_mem =
      result.machine.mem_total_bytes ? std::optional<double>(static_cast<double>(*result.machine.mem_total_bytes))
                                     : std::nullopt;
  const std::string command_text = JoinCommand(o.argv);
  std::vector<std::string> knob_order;
  for (const auto& k : *knobs) knob_order.push_back(k.name);

  std::optional<Error> own_error;
  TrialFn run_trial = [&](int id, const TrialRequest& req) -> std::optional<Trial> {
    if (run::Interrupted()) return std::nullopt;
    const double elapsed = telemetry::MonotonicSeconds() - t0;
    const std::string key = TrialKey(o.argv, o.shell, o.parse, req);

    // A trial measured before on this machine is taken as it was.
    if (!o.fresh) {
      auto found = (*cache)->Find(key, machine_key);
      if (!found) {
        own_error = found.error();
        return std::nullopt;
      }
      if (*found) {
        ++result.trials_cached;
        if (o.on_event) {
          TrialEvent done{false, id, &req, &**found, 0, elapsed, o.budget_s, &knob_order};
          o.on_event(done);
        }
        return std::move(**found);
      }
    }
    const double budget = std::min(TrialCap(o), o.budget_s - elapsed - kStopAllowanceS);
    if (budget < kMinTrialS) {
      result.budget_spent = true;
      return std::nullopt;
    }
    if (o.on_event) o.on_event(TrialEvent{true, id, &req, nullptr, budget, elapsed, o.budget_s, &knob_order});

    probe::StageOptions stage = base;
    RenderedRun rendered = RenderRun(o.argv, *knobs, req.knobs);
    stage.argv = rendered.argv;
    for (const auto& [k, v] : rendered.env) stage.env[k] = v;
    stage.budget_s = budget;
    stage.log_dir = (fs::path(log_root) / fmt::format("{:03d}-{}", id, probe::StageName(req.mode))).string();
    const double started_unix = static_cast<double>(std::time(nullptr));
    auto measured = probe::RunStage(req.mode, stage, **sampler);
    if (!measured) {
      own_error = measured.error();
      return std::nullopt;
    }
    Trial trial = TrialFromStage(*measured, *knobs, host_mem);
    trial.id = id;
    trial.request = req;
    trial.started_unix = started_unix;
    trial.interrupted = run::Interrupted();
    ++result.trials_run;
    if (!trial.interrupted) {
      if (Status st = (*cache)->Put(key, machine_key, command_text, trial); !st) {
        own_error = st.error();
        return std::nullopt;
      }
    }
    if (o.on_event) {
      TrialEvent done{false, id, &req, &trial, budget, telemetry::MonotonicSeconds() - t0, o.budget_s, &knob_order};
      o.on_event(done);
    }
    return trial;
  };

  SearchOptions search;
  search.knobs = *knobs;
  search.strategy = o.strategy;
  search.gpu = gpu_index >= 0;
  search.mem_target = o.mem_target;
  search.tolerance = o.tolerance;
  search.batch_multiple = o.batch_multiple;
  result.search = RunSearch(search, run_trial);
  (*sampler)->Stop();
  if (remove_logs) {
    std::error_code ec;
    fs::remove_all(log_root, ec);
  }
  if (own_error) return *own_error;

  result.interrupted = run::Interrupted();
  result.wall_s = telemetry::MonotonicSeconds() - t0;
  result.needs = NeedsOf(result.search);
  if (!result.search.recommended.empty())
    result.recommended_command =
        PasteableCommand(o.argv, o.shell, *knobs, result.search.recommended, result.python_dir);
  if (!result.search.fastest.empty())
    result.fastest_command = PasteableCommand(o.argv, o.shell, *knobs, result.search.fastest, result.python_dir);
  if (!o.out_dir.empty()) {
    if (Status st = WriteOutputs(result, o.out_dir); !st) return st.error();
  }
  return result;
}

}  // namespace sat::tune
