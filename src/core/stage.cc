#include "core/stage.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/stage_command.h"
#include "measure/instrumented_run.h"
#include "measure/observation_log.h"
#include "run/interrupt.h"

namespace sat::core {

std::string_view StageName(StageKind k) {
  switch (k) {
    case StageKind::kLoader: return "loader";
    case StageKind::kCompute: return "compute";
    case StageKind::kFull: return "full";
  }
  return "?";
}

namespace {

// The helper's mode for each stage (docs/helper-protocol.md).
std::string_view ModeOf(StageKind k) {
  switch (k) {
    case StageKind::kLoader: return "loader";
    case StageKind::kCompute: return "compute";
    case StageKind::kFull: return "train";
  }
  return "train";
}

// Running means of the shares that parsed lines report.
struct ParsedShares {
  double data_sum = 0;
  size_t data_n = 0;
  std::map<std::string, std::pair<double, size_t>> phases;
  size_t lines = 0;

  void Add(const measure::ParsedLine& l) {
    ++lines;
    if (l.data_wait_share) {
      data_sum += *l.data_wait_share;
      ++data_n;
    }
    for (const auto& [name, share] : l.phase_shares) {
      phases[name].first += share;
      phases[name].second += 1;
    }
  }
};

using telemetry::Sample;

std::optional<telemetry::Summary> SummarizeField(const std::vector<Sample>& samples,
                                                  std::function<std::optional<double>(const Sample&)> get) {
  return telemetry::Summarize(samples, get);
}

using telemetry::GpuOf;

template <class T>
std::optional<double> AsDouble(const std::optional<T>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

StageTelemetry SummarizeTelemetry(const std::vector<Sample>& samples, int gpu_index) {
  StageTelemetry t;
  if (samples.empty()) return t;
  t.cpu_count = samples.back().host.cpu_count;
  t.host_cpu_pct = SummarizeField(samples, [](const Sample& s) { return s.host.cpu_util_pct; });
  t.host_iowait_pct = SummarizeField(samples, [](const Sample& s) { return s.host.cpu_iowait_pct; });
  t.disk_busy_pct = SummarizeField(samples, [](const Sample& s) { return s.host.disk_busy_pct; });
  t.disk_read_bytes_per_s = SummarizeField(samples, [](const Sample& s) { return s.host.disk_read_bytes_per_s; });
  auto tree = [](auto get) {
    return [get](const Sample& s) -> std::optional<double> {
      if (!s.tree || !s.tree->alive) return std::nullopt;
      return get(*s.tree);
    };
  };
  using Tree = telemetry::ProcTreeSample;
  t.tree_cpu_pct = SummarizeField(samples, tree([](const Tree& p) { return p.cpu_pct; }));
  t.tree_sys_cpu_pct = SummarizeField(samples, tree([](const Tree& p) { return p.sys_cpu_pct; }));
  t.tree_rss_bytes = SummarizeField(samples, tree([](const Tree& p) { return AsDouble(p.rss_bytes); }));
  t.tree_read_bytes_per_s = SummarizeField(samples, tree([](const Tree& p) { return p.read_bytes_per_s; }));
  t.tree_rchar_per_s = SummarizeField(samples, tree([](const Tree& p) { return p.rchar_per_s; }));
  t.tree_write_bytes_per_s = SummarizeField(samples, tree([](const Tree& p) { return p.write_bytes_per_s; }));
  t.tree_blocked = SummarizeField(
      samples, tree([](const Tree& p) { return std::optional<double>(static_cast<double>(p.blocked_count)); }));
  t.tree_processes = SummarizeField(
      samples, tree([](const Tree& p) { return std::optional<double>(static_cast<double>(p.process_count)); }));
  t.tree_workers = SummarizeField(
      samples, tree([](const Tree& p) { return std::optional<double>(static_cast<double>(p.worker_count)); }));
  t.tree_gpu_mem_bytes = SummarizeField(samples, tree([](const Tree& p) { return AsDouble(p.gpu_memory_bytes); }));
  if (gpu_index >= 0) {
    auto gpu = [gpu_index](auto get) {
      return [gpu_index, get](const Sample& s) -> std::optional<double> {
        const telemetry::GpuSample* g = GpuOf(s, gpu_index);
        return g ? get(*g) : std::nullopt;
      };
    };
    using Gpu = telemetry::GpuSample;
    t.gpu_util_pct = SummarizeField(samples, gpu([](const Gpu& g) { return g.util_gpu_pct; }));
    t.gpu_mem_used_bytes = SummarizeField(samples, gpu([](const Gpu& g) { return AsDouble(g.memory_used_bytes); }));
    t.gpm_sm_active_pct = SummarizeField(samples, gpu([](const Gpu& g) { return g.gpm_sm_active_pct; }));
    t.gpm_sm_occupancy_pct = SummarizeField(samples, gpu([](const Gpu& g) { return g.gpm_sm_occupancy_pct; }));
    t.gpm_tensor_active_pct = SummarizeField(samples, gpu([](const Gpu& g) { return g.gpm_tensor_active_pct; }));
    t.gpm_dram_bw_util_pct = SummarizeField(samples, gpu([](const Gpu& g) { return g.gpm_dram_bw_util_pct; }));
    t.gpu_pcie_rx_bytes_per_s = SummarizeField(samples, gpu([](const Gpu& g) { return g.pcie_rx_bytes_per_s; }));
    if (const telemetry::GpuSample* g = GpuOf(samples.back(), gpu_index)) t.gpu_mem_total_bytes = AsDouble(g->memory_total_bytes);
    t.gpu = true;
    t.gpu_energy = GpuEnergy(samples, gpu_index);
  }
  t.cpu_energy = CpuEnergy(samples);
  return t;
}

// The most open-file paths a stage keeps from its scans of the tree's descriptors.
constexpr size_t kMaxOpenFiles = 4096;

// What the helper's `files` messages said (docs/helper-protocol.md), bounded: a sample of paths per process, so a
// long run of many workers stays within kMaxHelperFiles.
constexpr size_t kMaxHelperFiles = 4096;
struct HelperFiles {
  std::set<std::string> paths, writes;
  std::map<int64_t, int64_t> opens;  // pid -> its latest cumulative count

  void Add(const measure::HelperMessage& m) {
    for (const std::string& p : m.files.paths) {
      if (paths.size() < kMaxHelperFiles) paths.insert(p);
    }
    for (const std::string& p : m.files.writes) {
      if (writes.size() < kMaxHelperFiles) writes.insert(p);
    }
    int64_t& latest = opens[m.pid];
    latest = std::max(latest, m.files.opens);
  }
  void MoveTo(StageResult& r) {
    r.data_files.assign(paths.begin(), paths.end());
    r.written_files.assign(writes.begin(), writes.end());
    for (const auto& [pid, n] : opens) r.data_opens += n;
  }
};

// Options from one more `flags` message: a long list comes in parts, and a parser run twice sends it again.
void MergeFlags(const std::vector<measure::FlagOption>& in, std::vector<measure::FlagOption>& out) {
  for (const auto& o : in) {
    auto same = std::find_if(out.begin(), out.end(), [&](const measure::FlagOption& x) { return x.dest == o.dest; });
    if (same != out.end()) *same = o;
    else out.push_back(o);
  }
}

// The probed GPU's utilisation, memory and power over `samples`, times from `origin`; every k-th sample so that
// a long stage keeps at most about 600 points.
std::vector<GpuPoint> GpuSeries(const std::vector<Sample>& samples, int gpu_index, double origin) {
  std::vector<GpuPoint> out;
  if (gpu_index < 0) return out;
  const size_t step = samples.size() / 600 + 1;
  for (size_t i = 0; i < samples.size(); i += step) {
    const telemetry::GpuSample* g = GpuOf(samples[i], gpu_index);
    if (g == nullptr) continue;
    out.push_back({samples[i].mono_s - origin, g->util_gpu_pct, AsDouble(g->memory_used_bytes), g->power_draw_w});
  }
  return out;
}

// StageOptions::stop_above's rule: enough steady data, neither drifting nor still warming up, an interval within
// the looser width, and all of it at or above the rate.
bool ClearlyAbove(const measure::SteadyState& e, const StageOptions::StopAbove& stop) {
  return e.enough && !e.drift && !e.warmup_at_limit && e.rel_half_width <= stop.max_rel_half_width &&
         e.ci_low >= stop.rate;
}

}  // namespace

std::optional<double> MeanOf(const std::optional<telemetry::Summary>& s) {
  if (!s || s->count == 0 || !std::isfinite(s->mean)) return std::nullopt;
  return s->mean;
}

Result<StageResult> RunStage(StageKind kind, const StageOptions& o, telemetry::Sampler& sampler) {
  // A parser for scripts that only print.
  std::optional<measure::LineParser> parser;
  if (o.parse) {
    auto p = measure::LineParser::Create(*o.parse, o.batch_size);
    if (!p) return p.error();
    parser = std::move(*p);
  }
  const std::string run_id = fmt::format("{}{}-{}", kStageRunIdPrefix, getpid(), StageName(kind));

  measure::InstrumentedLaunch launch;
  run::RunSpec& spec = launch.spec;
  spec.argv = o.argv;
  spec.shell = o.shell;
  spec.env = o.env;
  measure::HelperEnv& helper = launch.helper;
  helper.mode = std::string(ModeOf(kind));
  // The automatic instrumentation; with --parse the pattern alone gives throughput (stage.h).
  helper.auto_instrument = o.auto_instrument && !o.parse;
  helper.auto_target = o.auto_target;
  helper.samples_per_step = o.samples_per_step;
  helper.trace_path = o.trace_path;
  spec.log_dir = o.log_dir;
  spec.echo = o.verbose;
  spec.stop_grace_s = 5;
  spec.term_grace_s = 3;

  const double t0 = telemetry::MonotonicSeconds();
  auto command = StartStageCommand(std::move(launch), run_id, std::move(parser), sampler);
  if (!command) return command.error();
  return MeasureStage(kind, o, **command, run_id, t0);
}

StageResult MeasureStage(StageKind kind, const StageOptions& o, StageCommand& command, const std::string& run_id,
                         double t0) {
  StageResult r;
  r.kind = kind;
  r.ran = true;
  r.log_dir = o.log_dir;

  measure::SteadyStateEstimator estimator(o.estimator);
  // What the estimator was fed, and when, for replaying this measurement (observation_log.h).
  measure::ObservationLog fed(o.log_dir.empty() ? "" : o.log_dir + "/estimator.csv");
  auto feed = [&](const measure::Observation& obs) {
    if (estimator.Add(obs)) fed.Append(command.Now() - t0, obs);
  };
  measure::ProgressAggregator progress(run_id);
  ParsedShares shares;
  HelperFiles files;
  std::set<std::string> open_files;
  double next_files_scan = t0 + 1.0;

  // Takes in what the helper sent and what the output said, feeding the estimator.
  double stop_requested_t = std::numeric_limits<double>::infinity();
  auto drain = [&](int timeout_ms) {
    command.Drain(timeout_ms, [&](const measure::HelperMessage& m) {
      if (m.type == measure::MessageType::kKnob) {
        r.knobs_seen[m.knob_name] = m.knob_value;
        if (m.automatic) r.knobs_auto.insert(m.knob_name);
        if (m.knob_flag) r.knob_flags[m.knob_name] = *m.knob_flag;
        if (m.knob_error) {
          r.knob_errors[m.knob_name] = *m.knob_error;
        } else {
          r.knob_errors.erase(m.knob_name);
        }
      }
      if (m.rank_info) r.world_size = std::max(r.world_size, m.rank_info->world_size);
      if (m.type == measure::MessageType::kLoader) {
        if (m.rank_info) r.rank_loaders[m.rank_info->rank] = m.loader;
        if (!r.loader || !m.rank_info || m.rank_info->rank == 0) r.loader = m.loader;
      }
      if (m.type == measure::MessageType::kFlops) {
        if (!m.flops.skipped.empty()) {
          if (r.flops_skipped.empty()) r.flops_skipped = m.flops.skipped;
        } else if (!r.flops) {
          r.flops = m.flops;
        }
      }
      if (m.type == measure::MessageType::kTrace) r.trace = m.trace;
      if (m.type == measure::MessageType::kFlags) MergeFlags(m.flag_options, r.flags);
      if (m.type == measure::MessageType::kFiles) files.Add(m);
      if (m.type == measure::MessageType::kDone && m.done_reason == "no-loader") r.no_loader = true;
      const size_t trainers = progress.totals().per_process.size();
      std::optional<measure::Observation> observed = progress.Add(m);
      if (progress.totals().per_process.size() != trainers) {
        std::vector<pid_t> pids;
        for (const auto& p : progress.totals().per_process) pids.push_back(static_cast<pid_t>(p.pid));
        command.SetTrainers(std::move(pids));
      }
      if (auto& obs = observed) {
        // A report that covers time after saturate asked the command to stop measures its shutdown, not
        // training: it still counts in the totals, never in the estimate.
        if (obs->t_end_s <= stop_requested_t) feed(*obs);
        if (o.live) o.live->ObserveRun(run_id, o.live_labels, *obs);
      }
    });
    for (auto& line : command.TakeParsedLines()) {
      shares.Add(line);
      feed(line.observation);
      if (o.live) o.live->ObserveRun(run_id, o.live_labels, line.observation);
    }
  };

  // Measure until the estimate is tight, the budget is spent, the command ends, or saturate is interrupted.
  std::optional<run::RunOutcome> ended;
  while (true) {
    drain(100);
    double now = command.Now();
    if (ended = command.Poll(); ended) break;
    if (run::Interrupted()) break;
    // The files the tree reads, for the filesystem check; a few scans see the dataset's files open. The same
    // scans tell whether the script imported torch, for the report when nothing was reported.
    if (now >= next_files_scan) {
      // Past the cap the scan still looks for torch, but reads no descriptors.
      for (auto& f : command.ScanOpenFiles(open_files.size() < kMaxOpenFiles)) {
        if (open_files.size() >= kMaxOpenFiles) break;
        open_files.insert(std::move(f));
      }
      next_files_scan = now + 2.0;
    }
    // The estimate, computed at most once per poll (O(n log n)) and only where a rule reads it.
    std::optional<measure::SteadyState> estimate;
    auto current = [&]() -> const measure::SteadyState& {
      if (!estimate) estimate = estimator.Estimate();
      return *estimate;
    };
    if (now - t0 >= o.budget_s) {
      // Past the budget, only a stage that is measuring but short of steady seconds goes on, within its grace.
      const bool short_of_steady = estimator.size() > 0 && current().steady_s < o.estimator.min_steady_s;
      if (!short_of_steady || now - t0 >= o.budget_s + o.grace_s) break;
    }
    const bool traced = o.trace_path.empty() || r.trace.has_value();
    if (o.stop_after_trace && r.trace) break;
    if (now - t0 < o.settle_s || !traced || estimator.size() == 0) continue;
    if (current().converged) break;
    if (o.stop_above && ClearlyAbove(current(), *o.stop_above)) {
      r.stopped_above = o.stop_above->rate;
      break;
    }
  }
  if (!ended) stop_requested_t = command.Now();
  r.outcome = command.StopAndWait();
  // The helper's last reports come as the command stops.
  drain(50);
  drain(0);
  if (o.live) o.live->EndRun(run_id);
  r.wall_s = command.Now() - t0;
  r.auto_failure = command.auto_failure();
  const measure::RunSigns signs = command.signs();
  r.helper_seen = signs.helper_seen;
  r.auto_seen = signs.auto_seen;
  r.torch_loaded = signs.torch_loaded;

  r.estimate = estimator.Estimate();
  r.series = estimator.Series();
  r.observations = estimator.size();
  r.totals = progress.totals();
  r.parsed_lines = shares.lines > 0;
  if (r.helper_seen && r.totals.wait_s + r.totals.step_s > 0) {
    r.data_wait_share = r.totals.WaitShare();
    r.phase_shares = r.totals.PhaseShares();
  } else if (shares.data_n > 0) {
    r.data_wait_share = shares.data_sum / shares.data_n;
    for (const auto& [name, sum_n] : shares.phases) r.phase_shares[name] = sum_n.first / sum_n.second;
  }
  r.open_data_paths.assign(open_files.begin(), open_files.end());
  files.MoveTo(r);

  // Telemetry over the steady part; the whole stage when no steady part was found.
  const double end = t0 + r.wall_s;
  const bool steady = r.observations > 0 && std::isfinite(r.estimate.steady_s);
  const double steady_from = steady ? r.estimate.start_t + r.estimate.warmup_s : t0;
  const double steady_to = steady ? steady_from + r.estimate.steady_s : end;
  const std::vector<Sample> samples = command.SamplesSince(t0);
  r.telemetry = SummarizeTelemetry(SteadySamples(samples, t0, end, steady_from, steady_to), o.gpu_index);
  r.gpu_series = GpuSeries(samples, o.gpu_index, r.observations > 0 ? r.estimate.start_t : t0);
  return r;
}

double SamplerStageRunner::Now() { return telemetry::MonotonicSeconds(); }

Result<StageResult> SamplerStageRunner::Run(StageKind kind, const StageOptions& options) {
  return RunStage(kind, options, sampler_);
}

std::vector<Sample> SteadySamples(const std::vector<Sample>& samples, double t0, double end, double from, double to) {
  auto within = [&](double lo, double hi) {
    std::vector<Sample> out;
    for (const Sample& s : samples) {
      if (s.mono_s >= lo && s.mono_s <= hi) out.push_back(s);
    }
    return out;
  };
  std::vector<Sample> steady = within(from, std::min(to, end));
  return steady.size() >= 2 ? steady : within(t0, end);
}

Result<StageSampler> StartStageSampler(telemetry::GpuBackend* gpu, int device, double span_s,
                                       const std::string& proc_root,
                                       std::function<void(const telemetry::Sample&)> on_sample) {
  telemetry::SamplerOptions so;
  so.on_sample = std::move(on_sample);
  so.interval_s = 0.25;
  so.capacity = static_cast<size_t>(span_s / so.interval_s) + 400;
  so.roots.proc = proc_root;
  so.gpu = gpu;
  StageSampler out;
  if (gpu != nullptr && gpu->DeviceCount() > 0) {
    out.gpu_index = device >= 0 ? device : 0;
    so.gpu_indices = {static_cast<unsigned>(out.gpu_index)};
  }
  auto sampler = telemetry::Sampler::Create(so);
  if (!sampler) return sampler.error();
  out.sampler = std::move(*sampler);
  out.first = out.sampler->SampleOnce();
  if (Status st = out.sampler->Start(); !st) return st.error();
  return out;
}

StageOptions StageOptionsOn(const StageSampler& sampling, int device) {
  StageOptions o;
  o.gpu_index = sampling.gpu_index;
  if (device >= 0) {
    o.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    o.env["CUDA_VISIBLE_DEVICES"] = std::to_string(device);
  }
  return o;
}

bool StageMeasured(const StageResult& stage) {
  return stage.ran && std::isfinite(stage.estimate.samples_per_s) && stage.estimate.samples_per_s > 0;
}

bool StageFailed(const StageResult& stage) {
  switch (stage.outcome.exit_class) {
    case run::ExitClass::kGpuOom:
    case run::ExitClass::kHostOom:
    case run::ExitClass::kWorkerKilled:
    case run::ExitClass::kFailed:
    case run::ExitClass::kStartFailed:
      return stage.ran;
    default:
      return false;
  }
}

}  // namespace sat::core
