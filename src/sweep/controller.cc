#include "sweep/controller.h"
#include "sweep/controller_internal.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

#include "run/interrupt.h"
#include "run/runner.h"
#include "sweep/attempt_runner.h"
#include "sweep/attempt_watch.h"
#include "sweep/bayes.h"
#include "sweep/degree_record.h"
#include "sweep/energy_ledger.h"
#include "sweep/launch.h"
#include "sweep/leftovers.h"
#include "sweep/metrics.h"
#include "sweep/plan.h"
#include "sweep/retry.h"
#include "sweep/staging.h"
#include "sweep/sweep_journal.h"
#include "telemetry/proc_tree.h"
#include "telemetry/sampler.h"
#include "util/atomic_file.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace sat::sweep {
namespace internal {

HostState HostOf(const telemetry::HostSample& h, LinkSpeeds& links) {
  HostState host;
  host.cpu_util_pct = h.cpu_util_pct;
  host.mem_total_bytes = h.mem_total_bytes;
  host.mem_available_bytes = h.mem_available_bytes;
  host.disk_busy_pct = h.disk_busy_pct;
  for (const telemetry::NetRates& net : h.nets) {
    if (auto speed = links.BytesPerS(net.name)) {
      const double util = std::max(net.rx_bytes_per_s, net.tx_bytes_per_s) / *speed;
      host.net_util = std::max(host.net_util.value_or(0), util);
    }
  }
  return host;
}

Status Controller::OpenJournal() {
  auto opened = OpenSweepJournal(spec_, o_.journal_path, o_.resume, o_.seed);
  if (!opened) return opened.error();
  lock_ = std::move(opened->lock);
  journal_ = std::move(opened->journal);
  seed_ = opened->seed;
  if (o_.resume) {
    // Slurm jobs go on without saturate; only the Slurm backend can tell what became of them.
    auto runs = journal_->Runs();
    if (!runs) return runs.error();
    std::vector<std::string> left_by_dead;  // the run ids of attempts whose controller died
    for (const RunRecord& r : *runs) {
      if (r.state != RunState::kRunning) continue;
      auto attempts = journal_->Attempts(r.key);
      if (!attempts) return attempts.error();
      if (!attempts->empty() && !attempts->back().slurm_job.empty()) {
        return UsageError(fmt::format("journal {} has runs in flight as Slurm jobs (run {} is job {}): resume it "
                                      "with --slurm",
                                      o_.journal_path, r.key, attempts->back().slurm_job));
      }
      if (!attempts->empty() && !attempts->back().ended_unix) left_by_dead.push_back(RunIdEntry(attempts->back()));
    }
    // Refused while their owner lives; so past this point every open attempt's controller is gone.
    auto requeued = journal_->RequeueInterrupted();
    if (!requeued) return requeued.error();
    result_.requeued = *requeued;
    if (const auto pids = run::FindMarkedProcesses(left_by_dead); !pids.empty()) {
      const int stopped = run::StopProcesses(pids, o_.stop_grace_s);
      Emit(SweepEvent::Kind::kNote, nullptr,
           fmt::format("stopped {} process{} left running by the interrupted controller before running their runs "
                       "again",
                       stopped, stopped == 1 ? "" : "es"));
    }
  }
  return Status::Ok();
}

Result<std::vector<DeviceInfo>> Controller::ChooseDevices(std::vector<unsigned>* indices) {
  std::vector<DeviceInfo> devices;
  *indices = o_.gpu_indices.empty() ? spec_.saturate.gpus : o_.gpu_indices;
  if (o_.gpu) {
    const unsigned count = o_.gpu->DeviceCount();
    if (indices->empty()) {
      for (unsigned i = 0; i < count; ++i) indices->push_back(i);
    }
    for (unsigned i : *indices) {
      if (i >= count) {
        return UsageError(fmt::format("GPU {} is not on this machine ({} GPU{})", i, count, count == 1 ? "" : "s"));
      }
      devices.push_back(DeviceInfo{fmt::format("gpu{}", i), DeviceKind::kGpu, static_cast<int>(i)});
    }
  }
  if (devices.empty()) {
    if (!indices->empty()) {
      result_.warnings.push_back(
          fmt::format("the sweep asks for GPUs {}, but there is no GPU backend: packing runs on the CPU",
                      fmt::join(*indices, ",")));
    }
    indices->clear();
    devices.push_back(DeviceInfo{"cpu", DeviceKind::kCpu, -1});
  }
  return devices;
}

Status Controller::OpenInstruments(const std::vector<unsigned>& gpu_indices) {
  if (!runner_) {
    telemetry::SamplerOptions sampler_options;
    sampler_options.interval_s = std::max(o_.tick_s, telemetry::Sampler::kMinIntervalS);
    sampler_options.capacity = 4;
    sampler_options.gpu = o_.gpu;
    sampler_options.gpu_indices = gpu_indices;
    sampler_options.on_sample = o_.on_sample;
    auto runner = RealAttemptRunner::Open(std::move(sampler_options));
    if (!runner) return runner.error();
    own_runner_ = std::move(*runner);
    runner_ = own_runner_.get();
  }
  if (!spec_.saturate.metric_pattern.empty()) {
    auto pattern = MetricPattern::Create(spec_.saturate.metric_pattern,
                                         fmt::format("metric pattern '{}'", spec_.saturate.metric_pattern));
    if (!pattern) return pattern.error();
    pattern_ = std::move(*pattern);
  }
  return Status::Ok();
}

Status Controller::Prepare() {
  runner_ = o_.runner;  // else the real one, made once the devices are chosen (OpenInstruments)
  t0_ = Now();  // for the notes of a resume; Execute starts the clock again
  if (auto s = CheckShape(spec_); !s) return s;
  if (auto s = OpenJournal(); !s) return s;
  std::vector<unsigned> gpu_indices;
  auto devices = ChooseDevices(&gpu_indices);
  if (!devices) return devices.error();

  // Settings that depend on the kind of device: how long measuring takes, how many runs may share one.
  const bool gpus = devices->front().kind == DeviceKind::kGpu;
  meter_.warmup_s = o_.warmup_s > 0 ? o_.warmup_s : gpus ? kGpuWarmupS : kCpuWarmupS;
  meter_.window_s = o_.window_s > 0 ? o_.window_s : gpus ? kGpuWindowS : kCpuWindowS;
  PackingParams params = o_.packing;
  params.pack_clocked = spec_.saturate.pack_clocked;
  params.margin = spec_.saturate.memory_margin;
  params.window_s = meter_.window_s;
  if (params.max_per_device <= 0) params.max_per_device = spec_.saturate.max_per_gpu;
  if (params.max_per_device <= 0) {
    const unsigned cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    params.max_per_device = gpus ? kDefaultMaxPerGpu : DefaultMaxPerCpu(cores);
  }
  packer_.emplace(std::move(*devices), params);

  auto records = journal_->Runs();
  if (!records) return records.error();
  if (spec_.early_terminate && spec_.metric) {
    auto bands = HyperbandBands(*spec_.early_terminate);
    if (!bands) return bands.error();
    bands_ = std::move(*bands);
  }
  for (const RunRecord& r : *records) {
    plan_[r.key] = Planned{r.index, r.params, r.attempts};
    // What ended runs reported, so that a resumed sweep draws the same cut-offs.
    if (!bands_.empty() && r.attempts > 0) {
      auto points = journal_->LastAttemptMetrics(r.key);
      if (!points) return points.error();
      for (const MetricPoint& p : *points) {
        if (p.name == spec_.metric->name) histories_[r.key].push_back(p.value);
      }
    }
    if (r.state == RunState::kQueued || r.state == RunState::kRetrying) {
      packer_->Enqueue(r.key, r.index, ShapeOf(spec_, r.params));
    }
  }
  if (auto s = OpenInstruments(gpu_indices); !s) return s;
  RememberShapes();
  if (!spec_.saturate.stage.paths.empty()) {
    auto stager = Stager::Start(spec_.saturate.stage);
    if (!stager) return stager.error();
    stager_ = std::move(*stager);
    WriteStaging();
  }
  return Status::Ok();
}

MeterOptions Controller::MeterFor(const std::string& shape) const {
  MeterOptions m = meter_;
  // Runs that end within a few seconds would end before a default warm-up and window judged them: an eighth of
  // their training time each (at least kShortestWindowS), so that packing is judged while they live. What the
  // command line set stays as set.
  const std::optional<double> seconds = packer_->RunSeconds(shape);
  if (!seconds) return m;
  const double span = std::max(kShortestWindowS, *seconds / 8);
  if (o_.warmup_s <= 0) m.warmup_s = std::min(m.warmup_s, span);
  if (o_.window_s <= 0) m.window_s = std::min(m.window_s, span);
  return m;
}

void Controller::RememberShapes() {
  if (o_.packing_record.empty()) return;
  std::string problem;
  record_ = DegreeRecord::Load(o_.packing_record, &problem);
  if (!problem.empty()) result_.warnings.push_back(problem);
  const telemetry::Sample sample = runner_->Latest().value_or(runner_->SampleOnce());
  std::vector<std::string> devices;
  for (const DeviceInfo& d : packer_->devices()) {
    const telemetry::GpuSample* g = GpuOf(sample, d.gpu_index);
    devices.push_back(g ? fmt::format("{} {}", d.name, g->name) : d.name);
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  machine_key_ = MachineKey(host, static_cast<unsigned>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))), devices);
  command_key_ = CommandKey(spec_);
  std::set<std::string> shapes;
  for (const auto& [key, planned] : plan_) shapes.insert(ShapeOf(spec_, planned.params));
  for (const std::string& shape : shapes)
    if (auto remembered = record_->Find(machine_key_, command_key_, shape)) packer_->Remember(shape, *remembered);
}

void Controller::RecordShapes() {
  if (!record_) return;
  for (const auto& [shape, learnt] : packer_->Learnt())
    record_->Put(machine_key_, command_key_, shape, learnt, static_cast<double>(std::time(nullptr)));
  if (Status saved = record_->Save(); !saved) result_.warnings.push_back(saved.message());
}

void Controller::WriteClocked() {
  const auto& clocked = packer_->Clocked();
  if (clocked.size() == clocked_written_) return;
  clocked_written_ = clocked.size();
  std::error_code ec;
  std::filesystem::create_directories(o_.log_dir, ec);
  (void)WriteFileAtomically(o_.log_dir + "/clock.json",
                            JsonText(nlohmann::json{{"pack", spec_.saturate.pack_clocked}, {"shapes", clocked}}, 1) +
                                "\n");
}

Result<SweepResult> Controller::Execute() {
  if (auto s = Prepare(); !s) return s.error();
  t0_ = Now();
  double next_tick = t0_;
  while (true) {
    if (!interrupted_ && run::Interrupted()) {
      // Every run sees the interrupt itself and stops; what is left is to wait for them and record it.
      interrupted_ = true;
      Emit(SweepEvent::Kind::kNote, nullptr,
           fmt::format("interrupted: stopping {} run{}; they stay queued for --resume", live_.size(),
                       live_.size() == 1 ? "" : "s"));
    }
    if (live_.empty() && (interrupted_ || failed_ || (packer_->queued() == 0 && deferred_.empty()))) break;
    // Wake often enough that a run's end frees its place at once.
    const double before = Now();
    const int wait_ms = static_cast<int>(std::clamp((next_tick - before) * 1000, 0.0, 50.0));
    if (auto s = Drain(wait_ms); !s) Fail(s.error());
    const double now = Now();
    // The devices' progress, for packing rule 10: fine-grained, so that the spans between runs' changes count; this
    // report, at the tick's own time, is also the one right before the tick places runs.
    ReportTrained(now);
    const bool due = now >= next_tick;
    // A run's end, a run newly rated or measured (a growth step may follow), or staging's news (cold reads in, a
    // copy made) acts at once, not at the next tick.
    if (!due && !AnyEnded() && !AnyNewlyKnown(now) && !(stager_ && stager_->HasNews())) continue;
    if (auto s = Tick(now, due); !s) Fail(s.error());
    if (due) next_tick = std::max(next_tick + o_.tick_s, now);
  }
  if (failed_) return *failed_;
  const double now = Now();
  result_.wall_s = now - t0_;
  result_.interrupted = interrupted_;
  result_.held = packer_->HeldDegrees();
  result_.clocked = packer_->Clocked();
  WriteClocked();
  RecordShapes();
  if (stager_) {
    result_.staging = stager_->Report();
    WriteStaging();
  }
  auto counts = journal_->Counts();
  if (!counts) return counts.error();
  result_.counts = *counts;
  if (o_.on_snapshot) o_.on_snapshot(Snapshot(runner_->Latest().value_or(telemetry::Sample{}), now));
  return result_;
}

void Controller::Fail(Error error) {
  if (failed_) return;
  Emit(SweepEvent::Kind::kNote, nullptr,
       fmt::format("{}: starting nothing new; stopping {} run{}; the journal keeps every run for --resume",
                   error.message, live_.size(), live_.size() == 1 ? "" : "s"));
  failed_ = std::move(error);
  for (auto& [key, a] : live_) a->process->RequestStop();
}

namespace {

// The attempt's meter says it is rated, or measured, and the packer was not told yet.
bool NewlyRated(const Attempt& a, double now) { return !a.rated && !a.measured && a.watch.meter().Rated(now); }
bool NewlyMeasured(const Attempt& a, double now) { return !a.measured && a.watch.meter().Measured(now); }

}  // namespace

bool Controller::AnyNewlyKnown(double now) const {
  return std::any_of(live_.begin(), live_.end(), [&](const auto& entry) {
    return NewlyRated(*entry.second, now) || NewlyMeasured(*entry.second, now);
  });
}

void Controller::ReportTrained(double now) {
  std::map<int, Trained> devices = trained_left_;
  for (const auto& [key, a] : live_) {
    Trained& t = devices[a->device];
    const RunMeter& meter = a->watch.meter();
    const RunMeter::Trained trained = meter.TrainedAt(now, !a->process->Poll());
    t.samples += trained.samples;
    t.steps += trained.steps;
    // A run still starting up trains nothing and counts for no degree (packing.h rule 11).
    if (!meter.first_step_t()) continue;
    if (!a->stepped) packer_->Stepping(key, *meter.first_step_t(), meter.options().warmup_s, meter.options().window_s);
    a->stepped = true;
    t.warm = t.warm && now >= *meter.first_step_t() + meter.options().warmup_s;
  }
  for (const auto& [d, t] : devices) packer_->Trained(d, now, t.samples, t.steps, t.warm);
}

bool Controller::AnyEnded() const {
  return std::any_of(live_.begin(), live_.end(),
                     [](const auto& entry) { return entry.second->process->Poll().has_value(); });
}

Status Controller::Drain(int timeout_ms) {
  auto messages = runner_->Poll(timeout_ms);
  if (!messages) return messages.error();
  for (const measure::HelperMessage& m : *messages) {
    auto id = by_run_id_.find(m.run);
    if (id == by_run_id_.end()) continue;
    auto it = live_.find(id->second);
    if (it == live_.end()) continue;
    Attempt& a = *it->second;
    if (!a.process->Accept(m)) continue;
    for (MetricPoint& p : a.watch.OnMessage(m)) AddMetric(a, std::move(p));
  }
  return Status::Ok();
}

void Controller::ReadTrees(const telemetry::Sample& sample, double now) {
  for (auto& [key, a] : live_) {
    const telemetry::ProcTreeSample tree = a->process->ReadTree(a->watch, sample, now);
    if (tree.process_count > 0) a->processes = tree.process_count;
    for (MetricPoint& p : a->watch.TakeLines()) AddMetric(*a, std::move(p));
    packer_->Update(key, a->watch.meter().footprint());
  }
}

Status Controller::Tick(double now, bool sample_now) {
  // Between ticks (a run just ended) the last readings serve: tree rates over a few milliseconds are noise.
  const telemetry::Sample sample =
      sample_now ? runner_->SampleOnce() : runner_->Latest().value_or(telemetry::Sample{});
  if (sample_now) {
    for (size_t i = 0; i < packer_->devices().size(); ++i) {
      energy_.Read(static_cast<int>(i), EnergyReadingOf(sample, packer_->devices()[i].gpu_index));
    }
    ReadTrees(sample, now);
  }
  if (!bands_.empty()) TerminateEarly();

  // Attempts whose command is over: the journal first, so that a crash right after loses nothing.
  std::vector<std::string> ended;
  for (const auto& [key, a] : live_) {
    if (a->process->Poll()) ended.push_back(key);
  }
  if (!ended.empty()) {
    // Their last helper reports are in the socket already.
    if (auto s = Drain(0); !s) return s;
  }
  // Each ended attempt leaves live_ even when the journal refuses its end: its attempt then stays open there, and
  // a resume requeues it.
  Status recorded;
  for (const std::string& key : ended) {
    Attempt& a = *live_.at(key);
    if (auto s = End(a, *a.process->Poll()); !s && recorded) recorded = s;
    by_run_id_.erase(a.watch.run_id());
    live_.erase(key);
  }
  if (!recorded) return recorded;

  // On the CPU device a run's steady rate (two half windows that agree) lets growth go on, and a gain far above
  // noise settles its check early (packing.h rule 9).
  for (auto& [key, a] : live_) {
    if (!NewlyRated(*a, now)) continue;
    a->rated = true;
    packer_->Rated(key, now, a->watch.meter().footprint(), *this, a->watch.meter().options().window_s);
  }
  // Runs now steady enough to trust; a growth newcomer among them settles its gain check.
  for (auto& [key, a] : live_) {
    if (!NewlyMeasured(*a, now)) continue;
    a->measured = true;
    packer_->Measured(key, now, a->watch.meter().footprint(), *this, a->watch.meter().options().window_s);
  }
  // auto staging: the first run is judged on the first seconds of its training (or once measured).
  if (stager_ && stager_->Undecided()) {
    for (auto& [key, a] : live_) JudgeStaging(*a, false);
  }

  // Runs whose start-failure delay is over queue again.
  std::erase_if(deferred_, [&](const Deferred& d) {
    if (d.ready_t > now) return false;
    const Planned& planned = plan_.at(d.key);
    packer_->Enqueue(d.key, planned.index, ShapeOf(spec_, planned.params));
    return true;
  });
  if (stager_) {
    auto note = stager_->Poll();
    if (!note) return note.error();
    if (*note) {
      Emit(SweepEvent::Kind::kNote, nullptr, std::move(**note));
      WriteStaging();
    }
    // Once the copy is made and judged worth it, the runs still on the source: restarted on it where sooner.
    if (stager_->RestartDue() && !interrupted_ && !failed_) {
      RestartOnCopy();
      WriteStaging();
    }
  }
  if (!interrupted_ && !failed_) {
    // After a start fails, the rest of this round's admissions leave the packer unstarted (they stay queued in
    // the journal), so the packer never holds a run the controller does not.
    Status started;
    for (const Admission& admission : Admissions(now, sample)) {
      if (started) {
        started = Start(admission, now);
      } else {
        packer_->Left(admission.key, LeaveReason::kOther, Footprint{});
      }
    }
    if (!started) return started;
  }
  for (std::string& note : packer_->TakeNotes()) Emit(SweepEvent::Kind::kNote, nullptr, std::move(note));
  WriteClocked();
  if (now - last_snapshot_ >= 1) {
    last_snapshot_ = now;
    if (o_.on_snapshot) o_.on_snapshot(Snapshot(sample, now));
    if (stager_ && stager_->Report().decision == "copying") WriteStaging();
  }
  return Status::Ok();
}

std::vector<DeviceState> Controller::DeviceStates(const telemetry::Sample& sample) const {
  std::vector<DeviceState> states;
  for (const DeviceInfo& d : packer_->devices()) {
    DeviceState s;
    if (d.kind == DeviceKind::kCpu) {
      s.capacity_bytes = sample.host.mem_total_bytes;
      s.free_bytes = sample.host.mem_available_bytes;
    } else if (const telemetry::GpuSample* g = GpuOf(sample, d.gpu_index)) {
      s.capacity_bytes = g->memory_total_bytes;
      s.free_bytes = g->memory_free_bytes;
    }
    states.push_back(s);
  }
  return states;
}

void Controller::AddMetric(Attempt& a, MetricPoint point) {
  if (spec_.metric && point.name == spec_.metric->name) a.history.push_back(point.value);
  a.metrics.Add(std::move(point));
}

void Controller::TerminateEarly() {
  // Every run's history counts, as in W&B: the ended runs' and the live ones' so far.
  std::vector<std::vector<double>> histories;
  for (const auto& [key, h] : histories_) {
    if (!live_.count(key)) histories.push_back(h);
  }
  for (const auto& [key, a] : live_) histories.push_back(a->history);
  const bool maximize = spec_.metric->goal == Goal::kMaximize;
  const HyperbandSpec& h = *spec_.early_terminate;
  const std::vector<double> thresholds = HyperbandThresholds(bands_, h.eta, histories, maximize);
  for (auto& [key, a] : live_) {
    if (!a->stopped_early.empty()) continue;
    const auto cut = HyperbandJudge(bands_, thresholds, a->history, maximize, h.strict);
    if (!cut || !cut->stop) continue;
    a->stopped_early = fmt::format("behind at iteration {}: {} {:g} is worse than the cut-off {:g}", cut->band,
                                   spec_.metric->name, cut->value, cut->threshold);
    a->process->RequestStop();
    Emit(SweepEvent::Kind::kNote, a.get(), "stopping early: " + a->stopped_early);
  }
}

Status Controller::Propose(const std::string& key) {
  std::vector<nlohmann::json> pending;
  for (const auto& [live_key, a] : live_) pending.push_back(plan_.at(live_key).params);
  Planned& planned = plan_.at(key);
  auto values = ProposeRunValues(spec_, *journal_, key, planned.index, pending, seed_);
  if (!values) return values.error();
  planned.params = std::move(*values);
  return Status::Ok();
}

Status Controller::Start(const Admission& admission, double now) {
  // The packer has placed the run; if it cannot start, the packer must hear that it left again.
  auto not_started = [&](Error e) -> Status {
    packer_->Left(admission.key, LeaveReason::kOther, Footprint{});
    return e;
  };
  if (plan_.at(admission.key).params.is_null()) {
    if (auto s = Propose(admission.key); !s) return not_started(s.error());
  }
  Planned& planned = plan_.at(admission.key);
  const DeviceInfo& device = packer_->devices()[admission.device];
  const bool on_gpu = device.kind == DeviceKind::kGpu;
  const int number = ++planned.attempts;
  const std::string log_dir = fmt::format("{}/{}-{}/attempt-{}", o_.log_dir, planned.index, admission.key, number);
  auto id = journal_->BeginAttempt(admission.key, on_gpu ? std::optional(device.gpu_index) : std::nullopt, 0, log_dir);
  if (!id) return not_started(id.error());
  const double begun = Now();  // the energy ledger's start, beside the journal's

  auto a = std::make_unique<Attempt>(now, on_gpu, MeterFor(ShapeOf(spec_, planned.params)),
                                     fmt::format("{}-{}-{}", getpid(), admission.key, number),
                                     spec_.saturate.auto_instrumentation, spec_.metric);
  a->key = admission.key;
  a->index = planned.index;
  a->shape = ShapeOf(spec_, planned.params);
  a->id = *id;
  a->number = number;
  a->device = admission.device;

  Launch launch;
  launch.argv = RenderCommand(spec_, RunParams{planned.index, admission.key, planned.params});
  launch.env = spec_.saturate.env;
  for (const auto& [name, value] : o_.env) launch.env[name] = value;
  if (stager_) a->on_copy = stager_->Rewrite(&launch.argv, &launch.env);
  if (on_gpu) {
    // NVML numbers GPUs in PCI bus order; CUDA does too with this setting.
    launch.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    launch.env["CUDA_VISIBLE_DEVICES"] = std::to_string(device.gpu_index);
  }
  launch.log_dir = log_dir;
  launch.time_limit_s = spec_.saturate.timeout_s;
  launch.stop_grace_s = o_.stop_grace_s;
  if (pattern_) launch.pattern = &*pattern_;
  auto started = runner_->Start(a->watch, std::move(launch));
  if (!started) {
    // saturate's own failure (the log folder): the run is not to blame and stays queued.
    packer_->Left(admission.key, LeaveReason::kOther, Footprint{});
    AttemptOutcome outcome;
    outcome.exit_class = run::ExitClass::kStopped;
    outcome.detail = started.error().message;
    if (auto s = journal_->EndAttempt(a->id, outcome, {}, {}, RetryPolicy{spec_.saturate.retries}); !s) {
      return s.error();
    }
    return started.error();
  }
  a->process = std::move(*started);
  energy_.Begin(a->id, admission.device, begun);
  ++result_.started;
  const int degree = static_cast<int>(packer_->View()[admission.device].runs.size());
  Emit(SweepEvent::Kind::kStarted, a.get(),
       fmt::format("started on {} (attempt {}, {} run{} there{})", device.name, number, degree, degree == 1 ? "" : "s",
                   admission.growth && degree > 1 ? ", trying one more" : ""));
  by_run_id_[a->watch.run_id()] = admission.key;
  live_[admission.key] = std::move(a);
  return Status::Ok();
}

Status Controller::End(Attempt& a, const run::RunOutcome& outcome) {
  for (MetricPoint& p : a.watch.TakeLines()) AddMetric(a, std::move(p));
  // Values the helper's reports carried that no metrics message delivered (a dropped datagram).
  for (MetricPoint& p : a.watch.Missing(a.metrics)) a.metrics.Add(std::move(p));
  const bool oom = outcome.exit_class == run::ExitClass::kGpuOom || outcome.exit_class == run::ExitClass::kHostOom;
  const LeaveReason reason = outcome.exit_class == run::ExitClass::kFinished ? LeaveReason::kFinished
                             : oom                                           ? LeaveReason::kOutOfMemory
                                                                             : LeaveReason::kOther;
  const int shared_with = packer_->OneShapeDegree(a.key);
  const double now = Now();
  ReportTrained(now);
  const int degree = packer_->Left(a.key, reason, a.watch.meter().footprint(), now);
  const RunMeter::Trained left = a.watch.meter().TrainedAt(now, false);
  trained_left_[a.device].samples += left.samples;
  trained_left_[a.device].steps += left.steps;
  // What a run that ended on its own trained, and in how long: runs on the clock show it (sweep/clock_runs.h), and
  // so does which degree trained fastest where gain checks could not tell (runs ending before them).
  if (reason == LeaveReason::kFinished && a.stopped_early.empty()) {
    const RunMeter& meter = a.watch.meter();
    const double from = meter.first_step_t().value_or(meter.start_t());
    const double trained = meter.totals().samples > 0 ? meter.totals().samples : meter.totals().steps;
    packer_->Finished(a.shape, outcome.duration_s - (from - meter.start_t()), trained, shared_with);
    // Runs of the shape started before its length was known got the default warm-up and window: where its runs
    // end within seconds they take the shorter ones too (MeterFor), or they would end before they are measured and
    // hold the device's growth all their life.
    const MeterOptions shorter = MeterFor(a.shape);
    for (auto& [key, other] : live_) {
      if (other.get() != &a && other->shape == a.shape) other->watch.meter().Shorten(shorter);
    }
  }
  AttemptOutcome ended;
  ended.exit_class = outcome.exit_class;
  ended.exit_code = outcome.exit_code;
  ended.term_signal = outcome.term_signal;
  ended.detail = outcome.detail;
  ended.start_transient = outcome.start_transient;
  ended.oom_while_packed = oom && degree > 1;
  ended.stopped_early = !a.stopped_early.empty() && outcome.exit_class == run::ExitClass::kStopped;
  ended.error_line = LastErrorLine(outcome.stderr_tail, outcome.stdout_tail);
  if (!a.restarting.empty() && outcome.exit_class == run::ExitClass::kStopped) {
    ended.detail = "restarted on the local copy: " + a.restarting;
  }
  if (!bands_.empty()) histories_[a.key] = a.history;
  const RetryPolicy policy{spec_.saturate.retries};
  Measurements measurements = a.watch.meter().Summary();
  measurements.energy_j = energy_.End(a.id, Now());
  auto state = journal_->EndAttempt(a.id, ended, a.metrics.Points(), measurements, policy);
  if (!state) return state.error();
  if (stager_) {
    // A first run that ended before it was judged judges with what it showed.
    JudgeStaging(a, true);
    if (measurements.throughput_samples_per_s) stager_->AddRate(a.on_copy, *measurements.throughput_samples_per_s);
  }

  std::string text;
  bool deferred = false;  // queued again only after the start-failure wait (deferred_)
  switch (*state) {
    case RunState::kDone:
      text = ended.stopped_early ? fmt::format("stopped early after {:.1f} s ({})", outcome.duration_s, a.stopped_early)
                                 : fmt::format("finished in {:.1f} s", outcome.duration_s);
      break;
    case RunState::kQueued:
      text = ended.oom_while_packed
                 ? fmt::format("out of memory with {} runs on {}: queued again, not counted as a failure", degree,
                               packer_->devices()[a.device].name)
                 : fmt::format("{}: queued again", ended.detail);
      break;
    case RunState::kRetrying:
      text = fmt::format("{} ({}): will retry", run::ExitClassName(outcome.exit_class), outcome.detail);
      if (ended.start_transient && ended.exit_class == run::ExitClass::kStartFailed) {
        // Nothing to start it with now (processes, descriptors): wait, longer each time, before the next try.
        const int n = ++plan_.at(a.key).transient_starts;
        const double delay = TransientStartDelay(n, std::uniform_real_distribution<double>(0.5, 1.5)(jitter_));
        text += fmt::format(" in {:.1f} s (start failure {} of at most {}, not counted against its retries)", delay,
                            n, policy.transient_starts);
        if (!interrupted_ && !failed_) {
          deferred_.push_back({Now() + delay, a.key});
          deferred = true;
        }
      }
      break;
    default: {
      // The journal's detail says why a retry was refused.
      auto attempts = journal_->Attempts(a.key);
      const std::string detail = attempts.ok() && !attempts->empty() ? attempts->back().detail : outcome.detail;
      text = fmt::format("{} ({})", run::ExitClassName(outcome.exit_class), detail);
      break;
    }
  }
  if (spec_.metric) {
    auto best = a.metrics.Last(spec_.metric->name);
    if (best && *state == RunState::kDone) text += fmt::format(", {} {:g}", spec_.metric->name, *best);
  }
  Emit(SweepEvent::Kind::kEnded, &a, std::move(text));
  if ((*state == RunState::kQueued || *state == RunState::kRetrying) && !interrupted_ && !failed_ && !deferred) {
    packer_->Enqueue(a.key, a.index, a.shape);
  }
  return Status::Ok();
}

void Controller::Emit(SweepEvent::Kind kind, const Attempt* a, std::string text) {
  if (!o_.on_event) return;
  SweepEvent e;
  e.kind = kind;
  e.elapsed_s = Now() - t0_;
  if (a) {
    e.key = a->key;
    e.index = a->index;
    e.device = packer_->devices()[a->device].name;
  }
  e.text = std::move(text);
  o_.on_event(e);
}

WindowRates Controller::Rates(const std::string& key, double t0, double t1) const {
  auto it = live_.find(key);
  return it == live_.end() ? WindowRates{} : it->second->watch.meter().Rates(t0, t1);
}

SweepSnapshot Controller::Snapshot(const telemetry::Sample& sample, double now) const {
  SweepSnapshot snap;
  snap.elapsed_s = now - t0_;
  if (auto counts = journal_->Counts(); counts) snap.counts = *counts;
  snap.held = packer_->HeldDegrees();
  snap.clocked = packer_->Clocked();
  snap.clocked_packed = spec_.saturate.pack_clocked;
  if (stager_) snap.staging = stager_->Report();
  for (const Packer::DeviceView& view : packer_->View()) {
    DeviceSnapshot d;
    d.name = view.info.name;
    d.proven = view.proven;
    d.cap = view.cap;
    d.probing = view.probing;
    d.poor = view.poor;
    if (view.info.kind == DeviceKind::kCpu) {
      d.util_pct = sample.host.cpu_util_pct;
      d.mem_total_bytes = sample.host.mem_total_bytes;
      if (sample.host.mem_total_bytes && sample.host.mem_available_bytes) {
        d.mem_used_bytes = *sample.host.mem_total_bytes - *sample.host.mem_available_bytes;
      }
    } else if (const telemetry::GpuSample* g = GpuOf(sample, view.info.gpu_index)) {
      d.util_pct = g->util_gpu_pct;
      d.mem_used_bytes = g->memory_used_bytes;
      d.mem_total_bytes = g->memory_total_bytes;
      d.power_w = g->power_draw_w;
    }
    for (const Packer::RunView& r : view.runs) {
      const Attempt& a = *live_.at(r.key);
      const WindowRates rates = a.watch.meter().Rates(now - meter_.window_s, now);
      d.runs.push_back(LiveRunView{r.key, r.index, plan_.at(r.key).params, a.number, now - a.watch.meter().start_t(),
                                   r.measured, rates.samples_per_s, rates.cpu_pct, r.footprint.mem_bytes});
    }
    snap.devices.push_back(std::move(d));
  }
  return snap;
}

}  // namespace internal

Result<SweepResult> RunSweep(const Spec& spec, const SweepOptions& options) {
  internal::Controller controller(spec, options);
  return controller.Execute();
}

}  // namespace sat::sweep
