#include "sweep/node_attempt.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "measure/instrumented_run.h"
#include "run/interrupt.h"
#include "run/runner.h"
#include "sweep/attempt_watch.h"
#include "sweep/energy_ledger.h"
#include "sweep/launch.h"
#include "sweep/meter.h"
#include "sweep/metrics.h"
#include "sweep/retry.h"
#include "sweep/staging.h"
#include "telemetry/proc_tree.h"
#include "telemetry/sampler.h"
#include "util/atomic_file.h"
#include "util/json_text.h"

namespace sat::sweep {
namespace {

template <class T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <class T>
std::optional<T> Opt(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

std::optional<run::ExitClass> ExitClassFromName(std::string_view name) {
  for (run::ExitClass c : {run::ExitClass::kFinished, run::ExitClass::kFailed, run::ExitClass::kStopped,
                           run::ExitClass::kTimedOut, run::ExitClass::kGpuOom, run::ExitClass::kHostOom,
                           run::ExitClass::kWorkerKilled, run::ExitClass::kStartFailed}) {
    if (run::ExitClassName(c) == name) return c;
  }
  return std::nullopt;
}

nlohmann::json MeasurementsJson(const Measurements& m) {
  return {{"throughput_samples_per_s", OrNull(m.throughput_samples_per_s)},
          {"peak_gpu_memory_bytes", OrNull(m.peak_gpu_memory_bytes)},
          {"cpu_pct", OrNull(m.cpu_pct)},
          {"rss_bytes", OrNull(m.rss_bytes)},
          {"energy_j", OrNull(m.energy_j)},
          {"samples", OrNull(m.samples)}};
}

Measurements MeasurementsFromJson(const nlohmann::json& j) {
  Measurements m;
  if (!j.is_object()) return m;
  m.throughput_samples_per_s = Opt<double>(j, "throughput_samples_per_s");
  m.peak_gpu_memory_bytes = Opt<uint64_t>(j, "peak_gpu_memory_bytes");
  m.cpu_pct = Opt<double>(j, "cpu_pct");
  m.rss_bytes = Opt<uint64_t>(j, "rss_bytes");
  m.energy_j = Opt<double>(j, "energy_j");
  m.samples = Opt<double>(j, "samples");
  return m;
}

// Whether one of `pids` is in the GPU's process list.
bool HoldsAnyOf(const telemetry::GpuSample& g, const std::vector<pid_t>& pids) {
  return std::any_of(g.processes.begin(), g.processes.end(), [&](const telemetry::GpuProcess& p) {
    return std::find(pids.begin(), pids.end(), p.pid) != pids.end();
  });
}

// The GPU holding the tree's processes; else the first of the largest GPUs sampled (a job confined to its GPU
// sees only that one).
const telemetry::GpuSample* GpuOfTree(const telemetry::Sample& sample, const std::vector<pid_t>& pids) {
  const telemetry::GpuSample* largest = nullptr;
  for (const telemetry::GpuSample& g : sample.gpus) {
    if (HoldsAnyOf(g, pids)) return &g;
    if (g.memory_total_bytes && (!largest || *g.memory_total_bytes > *largest->memory_total_bytes)) largest = &g;
  }
  return largest;
}

// Every GPU holding one of the tree's processes (a run over several GPUs); else GpuOfTree's choice.
std::vector<unsigned> GpusOfTree(const telemetry::Sample& sample, const std::vector<pid_t>& pids) {
  std::vector<unsigned> out;
  for (const telemetry::GpuSample& g : sample.gpus) {
    if (HoldsAnyOf(g, pids)) out.push_back(g.index);
  }
  if (out.empty()) {
    if (const telemetry::GpuSample* g = GpuOfTree(sample, pids)) out.push_back(g->index);
  }
  return out;
}

// What the job holds of the node's GPUs, read from its request (NodeJob::request).
struct GpuHold {
  int whole = 0;        // whole GPUs
  double fraction = 0;  // the share of one GPU; 0: none
};
GpuHold GpuHoldOf(const nlohmann::json& request) {
  GpuHold hold;
  if (auto it = request.find("gpus"); it != request.end() && it->is_number()) hold.whole = it->get<int>();
  if (auto it = request.find("gpu_fraction"); it != request.end() && it->is_number()) {
    hold.fraction = it->get<double>();
  }
  return hold;
}

// The energy of the GPUs the job held: each GPU the run used, over the whole job (its start-up held the GPU
// too), times the share of a GPU the job asked for when it is a part of one (shard, MPS): a scheduler charges the
// fraction, and the rest of the GPU's energy belongs to the jobs beside it. Unknown when a GPU gave no reading.
std::optional<double> JobGpuEnergy(const EnergyLedger& ledger, const std::set<unsigned>& gpus, const GpuHold& hold) {
  if (gpus.empty()) return std::nullopt;
  double joules = 0;
  for (unsigned g : gpus) {
    std::optional<double> j = ledger.DeviceJoules(static_cast<int>(g));
    if (!j) return std::nullopt;
    joules += *j;
  }
  return hold.whole > 0 ? joules : joules * std::min(1.0, hold.fraction);
}

}  // namespace

nlohmann::json NodeJobToJson(const NodeJob& job) {
  nlohmann::json metric = nullptr;
  if (job.metric) metric = {{"name", job.metric->name}, {"goal", GoalName(job.metric->goal)}};
  return {{"attempt_id", job.attempt_id},
          {"run_key", job.run_key},
          {"attempt_no", job.attempt_no},
          {"argv", job.argv},
          {"env", job.env},
          {"log_dir", job.log_dir},
          {"metric_pattern", job.metric_pattern},
          {"metric", metric},
          {"auto", job.auto_instrumentation},
          {"time_limit_s", job.time_limit_s},
          {"warmup_s", job.warmup_s},
          {"window_s", job.window_s},
          {"request", job.request},
          {"stage", StagingOptionsJson(job.stage)}};
}

Result<NodeJob> NodeJobFromJson(const nlohmann::json& j) {
  try {
    NodeJob job;
    job.attempt_id = j.at("attempt_id").get<int64_t>();
    job.run_key = j.at("run_key").get<std::string>();
    job.attempt_no = j.at("attempt_no").get<int>();
    job.argv = j.at("argv").get<std::vector<std::string>>();
    job.env = j.at("env").get<std::map<std::string, std::string>>();
    job.log_dir = j.at("log_dir").get<std::string>();
    job.metric_pattern = j.value("metric_pattern", "");
    if (j.contains("metric") && j["metric"].is_object()) {
      job.metric = MetricSpec{j["metric"].at("name").get<std::string>(),
                              j["metric"].value("goal", "") == "maximize" ? Goal::kMaximize : Goal::kMinimize,
                              std::nullopt};
    }
    job.auto_instrumentation = j.value("auto", true);
    job.time_limit_s = j.value("time_limit_s", 0.0);
    job.warmup_s = j.value("warmup_s", 1.0);
    job.window_s = j.value("window_s", 1.0);
    job.request = j.value("request", nlohmann::json::object());
    if (!job.request.is_object()) job.request = nlohmann::json::object();
    job.stage = StagingOptionsFromJson(j.value("stage", nlohmann::json::object()));
    if (job.argv.empty()) return Error{"the job has no command"};
    return job;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("not a saturate job file: {}", e.what())};
  }
}

nlohmann::json NodeOutcomeToJson(const NodeOutcome& o) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricPoint& p : o.metrics) {
    metrics.push_back({{"name", p.name}, {"value", p.value}, {"step", OrNull(p.step)}, {"time_unix", p.time_unix}});
  }
  return {{"attempt_id", o.attempt_id},
          {"job_id", o.job_id},
          {"node", o.node},
          {"exit_class", run::ExitClassName(o.exit_class)},
          {"exit_code", o.exit_code},
          {"term_signal", o.term_signal},
          {"detail", o.detail},
          {"error_line", o.error_line},
          {"duration_s", o.duration_s},
          {"signalled", o.signalled},
          {"start_transient", o.start_transient},
          {"measurements", MeasurementsJson(o.measurements)},
          {"gpu_total_bytes", OrNull(o.gpu_total_bytes)},
          {"gpu_util_pct", OrNull(o.gpu_util_pct)},
          {"metrics", metrics}};
}

Result<NodeOutcome> NodeOutcomeFromJson(const nlohmann::json& j) {
  try {
    NodeOutcome o;
    o.attempt_id = j.at("attempt_id").get<int64_t>();
    o.job_id = j.value("job_id", "");
    o.node = j.value("node", "");
    auto exit_class = ExitClassFromName(j.value("exit_class", ""));
    o.exit_class = exit_class.value_or(run::ExitClass::kFailed);
    o.exit_code = j.value("exit_code", -1);
    o.term_signal = j.value("term_signal", 0);
    o.detail = j.value("detail", "");
    o.error_line = j.value("error_line", "");
    o.duration_s = j.value("duration_s", 0.0);
    o.signalled = j.value("signalled", false);
    o.start_transient = j.value("start_transient", false);
    o.measurements = MeasurementsFromJson(j.value("measurements", nlohmann::json::object()));
    o.gpu_total_bytes = Opt<uint64_t>(j, "gpu_total_bytes");
    o.gpu_util_pct = Opt<double>(j, "gpu_util_pct");
    for (const auto& p : j.value("metrics", nlohmann::json::array())) {
      o.metrics.push_back(MetricPoint{p.at("name").get<std::string>(), p.at("value").get<double>(),
                                      Opt<int64_t>(p, "step"), p.value("time_unix", 0.0)});
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("not a saturate outcome file: {}", e.what())};
  }
}

Result<std::optional<nlohmann::json>> ReadJsonFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<nlohmann::json>();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("cannot read {}: {}", path, std::strerror(errno))};
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{fmt::format("{} is not valid JSON", path)};
  return std::optional<nlohmann::json>(std::move(j));
}

Result<int> RunNodeAttempt(const std::string& job_path, const NodeIdentity& who, const NodeOptions& options) {
  auto read = ReadJsonFile(job_path);
  if (!read) return read.error();
  if (!*read) {
    return Error{fmt::format("no job file {} on {}: the sweep folder must be on a filesystem this node shares with "
                             "the submitting machine",
                             job_path, who.node)};
  }
  auto parsed = NodeJobFromJson(**read);
  if (!parsed) return Error{fmt::format("{}: {}", job_path, parsed.error().message)};
  NodeJob& job = *parsed;
  const std::string dir = std::filesystem::path(job_path).parent_path().string();
  const std::string& job_id = who.job_id;
  const GpuHold hold = GpuHoldOf(job.request);

  // First sign of life, so the submitter knows this node sees the sweep folder.
  const nlohmann::json started = {
      {"attempt_id", job.attempt_id}, {"job_id", job_id}, {"node", who.node}, {"started_unix", NowUnix()}};
  if (auto s = WriteFileAtomically(dir + "/" + kStartedFile, JsonText(started) + "\n"); !s) return s.error();

  // The data on this node's drive before the run starts; a node that cannot stage it ends the attempt as a start
  // failure, and the run never reads a half copy. Transient (retried) when it is this node's lack (room, a failed
  // copy); a bad path or store folder in the spec fails the run at once, as it would on every node.
  std::vector<datastore::Lease> staged;  // held until the run ends: the copies are not evicted under it
  if (!job.stage.paths.empty()) {
    auto staging = StageOnNode(job.stage, &staged);
    if (!staging) {
      NodeOutcome failed;
      failed.attempt_id = job.attempt_id;
      failed.job_id = job_id;
      failed.node = who.node;
      failed.exit_class = run::ExitClass::kStartFailed;
      failed.start_transient = staging.error().exit_code != kExitUsage;
      failed.signalled = run::Interrupted();
      failed.detail = fmt::format("staging failed on node {}: {}", who.node, staging.error().message);
      if (auto s = WriteFileAtomically(dir + "/" + kOutcomeFile, JsonText(NodeOutcomeToJson(failed)) + "\n"); !s) {
        return s.error();
      }
      return 1;
    }
    PointAtSources(staging->sources, staging->on_copy, &job.argv, &job.env);
    fmt::print(stderr, "saturate: {}\n", staging->note);
  }

  telemetry::SamplerOptions sampler_options;
  sampler_options.interval_s = options.tick_s;
  sampler_options.capacity = 2;
  sampler_options.gpu = options.gpu;
  auto sampler = telemetry::Sampler::Create(std::move(sampler_options));
  if (!sampler) return sampler.error();
  std::optional<MetricPattern> pattern;
  if (!job.metric_pattern.empty()) {
    auto compiled = MetricPattern::Create(job.metric_pattern, "'metric_pattern'");
    if (!compiled) return compiled.error();
    pattern = std::move(*compiled);
  }

  const bool on_gpu = options.gpu != nullptr && options.gpu->DeviceCount() > 0 && hold.fraction > 0;
  const std::string run_id = fmt::format("{}-{}-{}", getpid(), job.run_key, job.attempt_no);
  MeterOptions meter_options;
  meter_options.warmup_s = job.warmup_s;
  meter_options.window_s = job.window_s;
  AttemptWatch watch(run_id, telemetry::MonotonicSeconds(), on_gpu, meter_options, job.auto_instrumentation);
  RunMeter& meter = watch.meter();
  MetricLog metrics(job.metric);

  auto instrumented = watch.Start(Launch{.argv = job.argv,
                                         .env = job.env,
                                         .log_dir = job.log_dir,
                                         .time_limit_s = job.time_limit_s,
                                         .stop_grace_s = 10,
                                         .pattern = pattern ? &*pattern : nullptr,
                                         .lines = {}});  // the watch's own
  if (!instrumented) return instrumented.error();
  measure::InstrumentedRun& run = **instrumented;

  auto drain = [&](int timeout_ms) -> Status {
    return run.Drain(timeout_ms, [&](const measure::HelperMessage& m) {
      for (MetricPoint& p : watch.OnMessage(m)) metrics.Add(std::move(p));
    });
  };
  auto take_lines = [&] {
    for (MetricPoint& p : watch.TakeLines()) metrics.Add(std::move(p));
  };

  double next_tick = 0;
  std::optional<uint64_t> gpu_total;
  // A run alone on a whole GPU: the GPU's utilisation is its own, the compute share its shape needs.
  const bool whole_gpu = hold.whole > 0;
  double util_sum = 0;
  int util_n = 0;
  auto util = [&]() -> std::optional<double> {
    return util_n > 0 ? std::optional(util_sum / util_n) : std::nullopt;
  };
  bool footprint_written = false;
  // Every GPU's energy from the job's start; the run's GPUs are known once its processes show on one.
  EnergyLedger energy(std::max(2.0, 4 * options.tick_s));
  std::set<unsigned> run_gpus;
  auto read_energy = [&](const telemetry::Sample& sample) {
    for (const telemetry::GpuSample& g : sample.gpus) {
      energy.Read(static_cast<int>(g.index), EnergyReadingOf(sample, static_cast<int>(g.index)));
    }
  };
  read_energy((*sampler)->SampleOnce());
  while (!run.process().Poll()) {
    if (auto s = drain(50); !s) return s.error();
    const double now = telemetry::MonotonicSeconds();
    if (now < next_tick) continue;
    next_tick = now + options.tick_s;
    const telemetry::Sample sample = (*sampler)->SampleOnce();
    read_energy(sample);
    const telemetry::ProcTreeSample tree = watch.ReadTree(run, sample, now);
    if (on_gpu && !tree.pids.empty()) {
      for (unsigned g : GpusOfTree(sample, tree.pids)) run_gpus.insert(g);
    }
    if (const telemetry::GpuSample* g = on_gpu ? GpuOfTree(sample, tree.pids) : nullptr) {
      gpu_total = g->memory_total_bytes;
      // Training steps only: start-up leaves the GPU idle.
      if (whole_gpu && meter.stepping() && g->util_gpu_pct) {
        util_sum += *g->util_gpu_pct;
        ++util_n;
      }
    }
    take_lines();
    // Measured: the submitter may size this shape's other runs now, long before this one ends.
    if (!footprint_written && meter.Measured(now)) {
      NodeOutcome so_far;
      so_far.attempt_id = job.attempt_id;
      so_far.job_id = job_id;
      so_far.node = who.node;
      so_far.measurements = meter.Summary();
      so_far.gpu_total_bytes = gpu_total;
      so_far.gpu_util_pct = util();
      (void)WriteFileAtomically(dir + "/" + kFootprintFile, JsonText(NodeOutcomeToJson(so_far)) + "\n");
      footprint_written = true;
    }
  }
  // The last reports are in the socket already.
  if (auto s = drain(0); !s) return s.error();
  take_lines();
  for (MetricPoint& p : watch.Missing(metrics)) metrics.Add(std::move(p));

  const run::RunOutcome ended = *run.process().Poll();
  NodeOutcome outcome;
  outcome.attempt_id = job.attempt_id;
  outcome.job_id = job_id;
  outcome.node = who.node;
  outcome.exit_class = ended.exit_class;
  outcome.exit_code = ended.exit_code;
  outcome.term_signal = ended.term_signal;
  outcome.detail = ended.detail;
  outcome.error_line = LastErrorLine(ended.stderr_tail, ended.stdout_tail);
  outcome.duration_s = ended.duration_s;
  outcome.signalled = run::Interrupted();
  outcome.measurements = meter.Summary();
  // Up to the end of the run.
  read_energy((*sampler)->SampleOnce());
  outcome.measurements.energy_j = JobGpuEnergy(energy, run_gpus, hold);
  outcome.gpu_total_bytes = gpu_total;
  outcome.gpu_util_pct = util();
  outcome.metrics = metrics.Points();
  if (auto s = WriteFileAtomically(dir + "/" + kOutcomeFile, JsonText(NodeOutcomeToJson(outcome)) + "\n"); !s) {
    return s.error();
  }
  return ended.exit_class == run::ExitClass::kFinished ? 0 : 1;
}

}  // namespace sat::sweep
