#include "slurm/slurm_backend.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "run/interrupt.h"
#include "slurm/cli.h"
#include "slurm/node_wrapper.h"
#include "slurm/reconcile.h"
#include "slurm/right_size.h"
#include "sweep/plan.h"
#include "sweep/sweep_journal.h"
#include "telemetry/sampler.h"
#include "util/atomic_file.h"
#include "util/json_text.h"
#include "util/shell.h"
#include "util/strings.h"

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

// Whether a failed sbatch may have queued its job all the same: its reply timed out or slurmctld could not be
// reached to confirm (sbatch's own words), or sbatch did not answer in time (SlurmCli's limit), as opposed to a
// clear rejection of the job.
bool SubmitMayHaveQueued(std::string_view error) {
  for (std::string_view text : {"timed out", "Unable to contact", "did not answer within"}) {
    if (error.find(text) != std::string_view::npos) return true;
  }
  return false;
}

// sbatch's --time: [days-]hours:minutes:seconds.
std::string SlurmTime(double seconds) {
  const auto total = static_cast<long long>(std::ceil(seconds));
  return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

std::string Describe(const SlurmRequest& r) {
  std::vector<std::string> parts;
  if (!r.Gres().empty()) parts.push_back(r.Gres());
  parts.push_back(r.cpus ? fmt::format("{} CPU{}", *r.cpus, *r.cpus == 1 ? "" : "s") : "default CPUs");
  parts.push_back(r.mem_mib ? fmt::format("{} MiB", *r.mem_mib) : "default memory");
  return JoinNonEmpty(parts, ", ") + (r.sized ? ", sized from measurement" : "") +
         (r.oom_bumps > 0 ? fmt::format(", memory x{} after out-of-memory", 1 << r.oom_bumps) : "");
}

// An attempt saturate ended before its run could (no job, or a folder the nodes cannot see): not the run's fault,
// so it stays queued.
AttemptOutcome Stopped(std::string detail) {
  AttemptOutcome o;
  o.exit_class = run::ExitClass::kStopped;
  o.detail = std::move(detail);
  return o;
}

// One attempt submitted to Slurm and not yet ended in the journal.
struct Flight {
  int64_t attempt_id = 0;
  std::string key;
  int64_t index = 0;
  int attempt_no = 0;
  std::string shape;
  std::string job_id;  // empty until known
  std::string dir;     // the attempt's folder
  SlurmRequest request;
  std::optional<double> gone_since;  // monotonic time the job was first missed in squeue
  std::optional<JobInfo> info;
  bool started = false, footprint = false, cancelled = false;
  std::string node;
};

class SlurmController {
 public:
  SlurmController(const Spec& spec, const SlurmSweepOptions& options) : spec_(spec), o_(options) {}
  Result<SweepResult> Execute();

 private:
  Status Prepare();
  Status Adopt();
  Status LearnFromJournal();
  Status Tick(double now);
  Status Watch(Flight& f, const std::vector<QueuedJob>& queue, double now, bool* ended);
  Status Submit();
  Status SubmitGroup(const SlurmRequest& request, const std::vector<RunRecord>& runs);
  void HandleInterrupt();
  // Ends the sweep after the loop's first error: nothing new is submitted, and the note names the jobs that go on
  // in Slurm (their attempts stay open in the journal, so --resume adopts them). Returns `error`.
  Error Stop(Error error);
  void Learn(const std::string& shape, const ShapeUsage& usage);
  Result<int> OomBumps(const std::string& key) const;
  void Emit(SweepEvent::Kind kind, const Flight* f, std::string text);

  const Spec& spec_;
  const SlurmSweepOptions& o_;
  std::optional<SlurmCli> cli_;
  PartitionInfo partition_;
  GpuShare share_ = GpuShare::kGpu;
  std::unique_ptr<ControllerLock> lock_;  // before journal_, so it is released after the journal closes
  std::unique_ptr<Journal> journal_;
  uint64_t seed_ = 0;
  std::string job_name_;
  double warmup_s_ = kCpuWarmupS, window_s_ = kCpuWindowS;
  std::map<std::string, ShapeUsage> usage_;  // by shape
  std::vector<Flight> flights_;
  double t0_ = 0;
  bool interrupted_ = false, leave_running_ = false;
  int queue_failures_ = 0;
  SweepResult result_;
};

Status SlurmController::Prepare() {
  if (auto s = CheckShape(spec_); !s) return s;
  // Slurm first: a cluster that cannot take the sweep should not leave a journal behind.
  const char* path = getenv("PATH");
  auto cli = SlurmCli::Find(path ? path : "/usr/bin:/bin");
  if (!cli) return cli.error();
  cli_ = std::move(*cli);
  auto partitions = cli_->Partitions();
  if (!partitions) return partitions.error();
  auto partition = ChoosePartition(*partitions, spec_.saturate.slurm.partition);
  if (!partition) return partition.error();
  partition_ = std::move(*partition);
  const SlurmSpec& s = spec_.saturate.slurm;
  if (s.gpus.value_or(0) > 0 && partition_.gres.gpus_per_node == 0) {
    return UsageError(fmt::format("saturate.slurm.gpus is {}, but partition '{}' has no gpu GRES", *s.gpus,
                                  partition_.name));
  }
  auto share = ResolveShare(s.share, partition_.gres, partition_.name);
  if (!share) return share.error();
  share_ = *share;
  if (spec_.early_terminate) {
    result_.warnings.push_back(
        "early_terminate has no effect on Slurm: runs report their metrics when their job ends");
  }
  const bool gpus = DefaultRequest(s, partition_.gres).gpus > 0;
  warmup_s_ = o_.warmup_s > 0 ? o_.warmup_s : gpus ? kGpuWarmupS : kCpuWarmupS;
  window_s_ = o_.window_s > 0 ? o_.window_s : gpus ? kGpuWindowS : kCpuWindowS;

  auto opened = OpenSweepJournal(spec_, o_.journal_path, o_.resume, o_.seed);
  if (!opened) return opened.error();
  lock_ = std::move(opened->lock);
  journal_ = std::move(opened->journal);
  seed_ = opened->seed;
  job_name_ = SlurmJobName(o_.journal_path);
  std::error_code ec;
  std::filesystem::create_directories(o_.log_dir + "/slurm", ec);
  if (ec) return Error{fmt::format("cannot create {}/slurm: {}", o_.log_dir, ec.message())};
  if (auto st = LearnFromJournal(); !st) return st;
  return Adopt();
}

// What ended attempts measured, so a resumed sweep sizes its shapes as before.
Status SlurmController::LearnFromJournal() {
  auto runs = journal_->Runs();
  if (!runs) return runs.error();
  for (const RunRecord& r : *runs) {
    if (r.attempts == 0 || r.state == RunState::kRunning) continue;
    auto attempts = journal_->Attempts(r.key);
    if (!attempts) return attempts.error();
    if (attempts->empty() || attempts->back().slurm_job.empty()) continue;
    auto file = ReadJsonFile(attempts->back().log_dir + "/" + kOutcomeFile);
    if (!file || !*file) continue;
    auto outcome = NodeOutcomeFromJson(**file);
    if (outcome.ok() && outcome->exit_class == run::ExitClass::kFinished) {
      Learn(ShapeOf(spec_, r.params), UsageOf(*outcome));
    }
  }
  return Status::Ok();
}

Status SlurmController::Adopt() {
  auto open = journal_->AdoptOpenAttempts();
  if (!open) return open.error();
  auto runs = journal_->Runs();
  if (!runs) return runs.error();
  std::map<std::string, const RunRecord*> by_key;
  for (const RunRecord& r : *runs) by_key[r.key] = &r;
  for (const AttemptRecord& a : *open) {
    Flight f;
    f.attempt_id = a.id;
    f.key = a.run_key;
    f.index = by_key.count(a.run_key) ? by_key[a.run_key]->index : 0;
    f.attempt_no = a.attempt_no;
    f.shape = by_key.count(a.run_key) ? ShapeOf(spec_, by_key[a.run_key]->params) : "";
    f.job_id = a.slurm_job;
    f.dir = a.log_dir;
    f.request = SlurmRequest::FromJson(nlohmann::json::parse(a.slurm_request, nullptr, false));
    flights_.push_back(std::move(f));
  }
  result_.requeued = static_cast<int>(flights_.size());
  if (!flights_.empty()) {
    Emit(SweepEvent::Kind::kNote, nullptr,
         fmt::format("resuming: {} attempt{} left in flight; asking Slurm what became of them", flights_.size(),
                     flights_.size() == 1 ? "" : "s"));
  }
  return Status::Ok();
}

void SlurmController::Learn(const std::string& shape, const ShapeUsage& usage) {
  if (!usage.measured()) return;
  const bool first = !usage_[shape].measured();
  usage_[shape].Merge(usage);
  if (!first) return;
  const SlurmRequest sized = SizedRequest(spec_.saturate.slurm, partition_.gres, share_, usage_[shape], 0);
  Emit(SweepEvent::Kind::kNote, nullptr,
       fmt::format("{} measured: its runs now ask for {}", shape.empty() ? "this sweep's shape" : shape,
                   Describe(sized)));
}

Result<int> SlurmController::OomBumps(const std::string& key) const {
  auto attempts = journal_->Attempts(key);
  if (!attempts) return attempts.error();
  return static_cast<int>(std::count_if(attempts->begin(), attempts->end(), [](const AttemptRecord& a) {
    return a.exit_class == run::ExitClassName(run::ExitClass::kGpuOom) ||
           a.exit_class == run::ExitClassName(run::ExitClass::kHostOom);
  }));
}

Status SlurmController::Watch(Flight& f, const std::vector<QueuedJob>& queue, double now, bool* ended) {
  *ended = false;
  // What the node wrote so far.
  if (!f.started) {
    auto started = ReadJsonFile(f.dir + "/" + kStartedFile);
    if (started.ok() && *started) {
      f.started = true;
      f.node = (*started)->value("node", "");
      const std::string id = (*started)->value("job_id", "");
      if (f.job_id.empty() && !id.empty()) {
        f.job_id = id;
        if (auto s = journal_->SetSlurmJob(f.attempt_id, f.job_id, JsonText(f.request.ToJson())); !s) return s;
      }
    }
  }
  if (!f.footprint && !usage_[f.shape].measured()) {
    auto file = ReadJsonFile(f.dir + "/" + kFootprintFile);
    if (file.ok() && *file) {
      f.footprint = true;
      if (auto so_far = NodeOutcomeFromJson(**file); so_far) Learn(f.shape, UsageOf(*so_far));
    }
  }
  std::optional<NodeOutcome> outcome;
  auto file = ReadJsonFile(f.dir + "/" + kOutcomeFile);
  if (!file) return file.error();
  if (*file) {
    auto parsed = NodeOutcomeFromJson(**file);
    if (!parsed) return Error{fmt::format("{}/{}: {}", f.dir, kOutcomeFile, parsed.error().message)};
    outcome = std::move(*parsed);
  }

  // A job submitted just before saturate died has no id in the journal: its comment names the attempt.
  std::optional<QueuedJob> queued;
  for (const QueuedJob& q : queue) {
    if (!f.job_id.empty() && q.id == f.job_id) queued = q;
    if (!f.job_id.empty() || !StartsWith(q.comment, "saturate:")) continue;
    const std::vector<std::string> ids = Split(q.comment.substr(9), ',');
    const auto under = q.id.find('_');
    const size_t task =
        under == std::string::npos ? 0 : static_cast<size_t>(ParseInt(q.id.substr(under + 1)).value_or(0));
    if (task < ids.size() && ids[task] == std::to_string(f.attempt_id)) {
      queued = q;
      f.job_id = q.id;
      if (auto s = journal_->SetSlurmJob(f.attempt_id, f.job_id, JsonText(f.request.ToJson())); !s) return s;
    }
  }
  if (queued) {
    f.gone_since.reset();
    if (!queued->nodes.empty()) f.node = queued->nodes;
  } else if (!f.gone_since) {
    f.gone_since = now;
  }

  InFlightView view;
  view.job_id = f.job_id;
  view.sized = f.request.sized;
  view.started = f.started;
  view.outcome = outcome;
  view.queued = queued;
  view.gone_s = f.gone_since ? now - *f.gone_since : 0;
  view.cancelled_by_us = f.cancelled;
  const bool settled = outcome && (outcome->exit_class == run::ExitClass::kFinished || !outcome->signalled);
  if (!queued && !settled && (outcome || view.gone_s >= o_.grace_s) && !f.info && !f.job_id.empty()) {
    auto infos = cli_->ShowJobs({f.job_id});
    if (!infos) return infos.error();
    if (!infos->empty()) f.info = infos->front();
  }
  view.info = f.info;
  const ReconcileDecision d = Reconcile(view, o_.grace_s);
  if (d.action == ReconcileDecision::Action::kWait) return Status::Ok();
  if (d.action == ReconcileDecision::Action::kFolderInvisible) {
    const AttemptOutcome stopped = Stopped(d.detail);
    (void)journal_->EndAttempt(f.attempt_id, stopped, {}, {}, RetryPolicy{spec_.saturate.retries});
    return Error{d.detail};
  }

  // The journal first, then everything that follows from it.
  const std::vector<MetricPoint> metrics = outcome ? outcome->metrics : std::vector<MetricPoint>{};
  const Measurements measurements = outcome ? outcome->measurements : Measurements{};
  auto state = journal_->EndAttempt(f.attempt_id, d.outcome, metrics, measurements,
                                    RetryPolicy{spec_.saturate.retries});
  if (!state) return state.error();
  *ended = true;
  // A finished run's whole life is its footprint; a failed one may have died before it used what it needs.
  if (outcome && outcome->exit_class == run::ExitClass::kFinished) Learn(f.shape, UsageOf(*outcome));
  const double duration = outcome ? outcome->duration_s : 0;
  std::string text;
  switch (*state) {
    case RunState::kDone: text = fmt::format("finished in {:.1f} s", duration); break;
    case RunState::kQueued:
      text = d.oom ? fmt::format("out of memory under a sized request ({}): submitted again asking for more",
                                 Describe(f.request))
                   : fmt::format("{}: queued again", d.detail);
      break;
    case RunState::kRetrying:
      text = fmt::format("{} ({}): will retry", run::ExitClassName(d.outcome.exit_class), d.detail);
      break;
    default: {
      auto attempts = journal_->Attempts(f.key);
      text = fmt::format("{} ({})", run::ExitClassName(d.outcome.exit_class),
                         attempts.ok() && !attempts->empty() ? attempts->back().detail : d.detail);
    }
  }
  if (spec_.metric && outcome && *state == RunState::kDone) {
    for (auto it = metrics.rbegin(); it != metrics.rend(); ++it) {
      if (it->name != spec_.metric->name) continue;
      text += fmt::format(", {} {:g}", it->name, it->value);
      break;
    }
  }
  Emit(SweepEvent::Kind::kEnded, &f, std::move(text));
  return Status::Ok();
}

Status SlurmController::Tick(double now) {
  auto queue = cli_->Queue(job_name_);
  if (!queue) {
    // squeue fails now and then on a busy controller; a few misses in a row are an error.
    if (++queue_failures_ >= 5) return queue.error();
    return Status::Ok();
  }
  queue_failures_ = 0;
  for (size_t i = 0; i < flights_.size();) {
    bool ended = false;
    if (auto s = Watch(flights_[i], *queue, now, &ended); !s) return s;
    if (ended) {
      flights_.erase(flights_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  if (interrupted_) return Status::Ok();
  return Submit();
}

Status SlurmController::Submit() {
  auto runs = journal_->Runs();
  if (!runs) return runs.error();
  std::set<std::string> flying;
  std::map<std::string, int> unsized_flying;  // shape -> attempts in flight while it is not measured
  for (const Flight& f : flights_) {
    flying.insert(f.key);
    if (!usage_[f.shape].measured()) ++unsized_flying[f.shape];
  }
  // Runs with one request go out as one job array.
  std::map<std::string, std::pair<SlurmRequest, std::vector<RunRecord>>> groups;
  for (const RunRecord& r : *runs) {
    if ((r.state != RunState::kQueued && r.state != RunState::kRetrying) || flying.count(r.key)) continue;
    const std::string shape = ShapeOf(spec_, r.params);
    auto bumps = r.attempts > 0 ? OomBumps(r.key) : Result<int>(0);
    if (!bumps) return bumps.error();
    SlurmRequest request;
    if (usage_[shape].measured()) {
      request = SizedRequest(spec_.saturate.slurm, partition_.gres, share_, usage_[shape], *bumps);
    } else {
      // Until the shape is measured only a few of its runs go out, each with the spec's request.
      if (unsized_flying[shape] >= spec_.saturate.slurm.probes) continue;
      ++unsized_flying[shape];
      request = DefaultRequest(spec_.saturate.slurm, partition_.gres, *bumps);
    }
    auto& group = groups[JsonText(request.ToJson())];
    group.first = request;
    group.second.push_back(r);
  }
  for (const auto& [name, group] : groups) {
    if (auto s = SubmitGroup(group.first, group.second); !s) return s;
  }
  return Status::Ok();
}

Status SlurmController::SubmitGroup(const SlurmRequest& request, const std::vector<RunRecord>& runs) {
  const SlurmSpec& s = spec_.saturate.slurm;
  std::vector<Flight> submitted;
  std::vector<std::string> job_files, attempt_ids;
  // Each attempt is begun in the journal before sbatch: a crash after sbatch finds it open, not lost.
  for (const RunRecord& r : runs) {
    nlohmann::json params = r.params;
    if (params.is_null()) {
      std::vector<nlohmann::json> pending;
      for (const Flight& f : flights_) {
        if (auto run = journal_->Run(f.key); run.ok() && *run) pending.push_back((*run)->params);
      }
      auto values = ProposeRunValues(spec_, *journal_, r.key, r.index, pending, seed_);
      if (!values) return values.error();
      params = std::move(*values);
    }
    Flight f;
    f.key = r.key;
    f.index = r.index;
    f.attempt_no = r.attempts + 1;
    f.shape = ShapeOf(spec_, params);
    f.request = request;
    f.dir = fmt::format("{}/{}-{}/attempt-{}", o_.log_dir, r.index, r.key, f.attempt_no);
    auto id = journal_->BeginAttempt(r.key, std::nullopt, 0, f.dir);
    if (!id) return id.error();
    f.attempt_id = *id;

    NodeJob job;
    job.attempt_id = f.attempt_id;
    job.run_key = r.key;
    job.attempt_no = f.attempt_no;
    job.argv = RenderCommand(spec_, RunParams{r.index, r.key, params});
    job.env = spec_.saturate.env;
    job.log_dir = f.dir;
    job.metric_pattern = spec_.saturate.metric_pattern;
    job.metric = spec_.metric;
    job.auto_instrumentation = spec_.saturate.auto_instrumentation;
    job.time_limit_s = spec_.saturate.timeout_s;
    job.warmup_s = warmup_s_;
    job.window_s = window_s_;
    job.request = request.ToJson();
    job.stage = spec_.saturate.stage;
    std::error_code ec;
    std::filesystem::create_directories(f.dir, ec);
    const std::string job_file = f.dir + "/" + kJobFile;
    Status written = ec ? Status(Error{fmt::format("cannot create {}: {}", f.dir, ec.message())})
                        : WriteFileAtomically(job_file, JsonText(NodeJobToJson(job), 2) + "\n", kPrivateFileMode);
    if (!written) {
      const AttemptOutcome stopped = Stopped(written.message());
      (void)journal_->EndAttempt(f.attempt_id, stopped, {}, {}, RetryPolicy{spec_.saturate.retries});
      return written;
    }
    job_files.push_back(job_file);
    attempt_ids.push_back(std::to_string(f.attempt_id));
    submitted.push_back(std::move(f));
  }

  const bool array = submitted.size() > 1;
  const std::string script = fmt::format("{}/slurm/submit-{}.sh", o_.log_dir, submitted.front().attempt_id);
  std::string text = "#!/bin/bash\n# Written by saturate sweep: one run of the sweep per array task.\njobs=(";
  for (const std::string& file : job_files) text += "\n  " + ShellQuote(file);
  text += fmt::format("\n)\nexec {} sweep run-one \"${{jobs[${{SLURM_ARRAY_TASK_ID:-0}}]}}\"\n",
                      ShellQuote(o_.saturate_binary));
  Status written = WriteFileAtomically(script, text);

  const std::string comment = "saturate:" + JoinNonEmpty(attempt_ids, ",");
  std::vector<std::string> options = {"--job-name=" + job_name_,
                                      fmt::format("--output={}/slurm/{}", o_.log_dir, array ? "%A_%a.out" : "%j.out"),
                                      "--comment=" + comment};
  if (array) options.push_back(fmt::format("--array=0-{}", submitted.size() - 1));
  if (!s.partition.empty()) options.push_back("--partition=" + s.partition);
  if (!s.account.empty()) options.push_back("--account=" + s.account);
  if (!s.qos.empty()) options.push_back("--qos=" + s.qos);
  if (s.time_s > 0) options.push_back("--time=" + SlurmTime(s.time_s));
  for (const std::string& option : request.SbatchOptions()) options.push_back(option);
  for (const std::string& option : s.options) options.push_back(option);
  Result<std::string> job = written.ok() ? cli_->Submit(options, script) : Result<std::string>(written.error());
  if (!job && written) {
    // sbatch can fail after slurmctld queued the job (a reply that timed out): a job with this comment is ours.
    if (auto queue = cli_->Queue(job_name_); queue) {
      for (const QueuedJob& q : *queue) {
        if (q.comment == comment) {
          Emit(SweepEvent::Kind::kNote, nullptr,
               fmt::format("sbatch failed ({}), but Slurm queued the job: {}", job.error().message, q.id));
          job = q.id.substr(0, q.id.find('_'));
          break;
        }
      }
    }
  }
  if (!job) {
    // A reply that never came may still have queued the job, and it may show in squeue only later: the attempts
    // stay open without a job id, and --resume looks for them by their comment before submitting anything again.
    if (written.ok() && SubmitMayHaveQueued(job.error().message)) {
      return Error{fmt::format("{} (Slurm may still have queued the job: --resume looks for it by its comment '{}' "
                               "before submitting again)",
                               job.error().message, comment)};
    }
    // Not the runs' fault: they stay queued, and the error stops the sweep with sbatch's own words.
    for (const Flight& f : submitted) {
      const AttemptOutcome stopped = Stopped(job.error().message);
      (void)journal_->EndAttempt(f.attempt_id, stopped, {}, {}, RetryPolicy{spec_.saturate.retries});
    }
    return job.error();
  }
  for (size_t i = 0; i < submitted.size(); ++i) {
    Flight& f = submitted[i];
    f.job_id = array ? fmt::format("{}_{}", *job, i) : *job;
    if (auto st = journal_->SetSlurmJob(f.attempt_id, f.job_id, JsonText(request.ToJson())); !st) return st;
    ++result_.started;
    Emit(SweepEvent::Kind::kStarted, &f,
         fmt::format("submitted as job {} (attempt {}; asks {})", f.job_id, f.attempt_no, Describe(request)));
    flights_.push_back(std::move(f));
  }
  return Status::Ok();
}

void SlurmController::HandleInterrupt() {
  interrupted_ = true;
  if (flights_.empty()) return;
  const bool cancel = o_.cancel_on_interrupt || (o_.confirm_cancel && o_.confirm_cancel(flights_.size()));
  if (!cancel) {
    leave_running_ = true;
    Emit(SweepEvent::Kind::kNote, nullptr,
         fmt::format("interrupted: {} job{} left to Slurm; `saturate sweep --resume` picks them up, `scancel "
                     "--name={}` cancels them",
                     flights_.size(), flights_.size() == 1 ? "" : "s", job_name_));
    return;
  }
  std::vector<std::string> ids;
  for (Flight& f : flights_) {
    f.cancelled = true;
    if (!f.job_id.empty()) ids.push_back(f.job_id);
  }
  Emit(SweepEvent::Kind::kNote, nullptr,
       fmt::format("interrupted: cancelling {} job{}; their runs stay queued for --resume", ids.size(),
                   ids.size() == 1 ? "" : "s"));
  if (auto s = cli_->Cancel(ids); !s) Emit(SweepEvent::Kind::kNote, nullptr, s.message());
}

Error SlurmController::Stop(Error error) {
  if (flights_.empty()) return error;
  std::vector<std::string> ids;
  for (const Flight& f : flights_) ids.push_back(f.job_id.empty() ? "(id unknown)" : f.job_id);
  Emit(SweepEvent::Kind::kNote, nullptr,
       fmt::format("{}: submitting nothing new; {} job{} go{} on in Slurm ({}): `saturate sweep --resume` adopts "
                   "them, `scancel --name={}` cancels them",
                   error.message, flights_.size(), flights_.size() == 1 ? "" : "s", flights_.size() == 1 ? "es" : "",
                   fmt::join(ids, ", "), job_name_));
  return error;
}

void SlurmController::Emit(SweepEvent::Kind kind, const Flight* f, std::string text) {
  if (!o_.on_event) return;
  SweepEvent e;
  e.kind = kind;
  e.elapsed_s = telemetry::MonotonicSeconds() - t0_;
  if (f) {
    e.key = f->key;
    e.index = f->index;
    e.device = f->node.empty() ? "slurm" : f->node;
  }
  e.text = std::move(text);
  o_.on_event(e);
}

Result<SweepResult> SlurmController::Execute() {
  t0_ = telemetry::MonotonicSeconds();
  if (auto s = Prepare(); !s) return s.error();
  const double poll_s = spec_.saturate.slurm.poll_s;
  while (true) {
    if (!interrupted_ && run::Interrupted()) HandleInterrupt();
    // A second interrupt while cancelled jobs wind down: stop waiting; --resume reconciles them.
    if (leave_running_ || (interrupted_ && run::InterruptCount() > 1)) break;
    if (auto s = Tick(telemetry::MonotonicSeconds()); !s) return Stop(s.error());
    if (flights_.empty()) {
      auto counts = journal_->Counts();
      if (!counts) return Stop(counts.error());
      if (interrupted_ || counts->queued + counts->retrying == 0) break;
    }
    // Sleep in slices, so an interrupt is answered at once.
    const double until = telemetry::MonotonicSeconds() + poll_s;
    while (telemetry::MonotonicSeconds() < until && (interrupted_ || !run::Interrupted())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  result_.wall_s = telemetry::MonotonicSeconds() - t0_;
  result_.interrupted = interrupted_;
  auto counts = journal_->Counts();
  if (!counts) return counts.error();
  result_.counts = *counts;
  return result_;
}

}  // namespace

Result<SweepResult> RunSlurmSweep(const Spec& spec, const SlurmSweepOptions& options) {
  SlurmController controller(spec, options);
  return controller.Execute();
}

std::string SlurmJobName(const std::string& journal_path) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(journal_path, ec).lexically_normal().string();
  // FNV-1a: the same name from every saturate build, unlike std::hash.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : absolute) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("sat-{:012x}", h & 0xffffffffffffULL);
}

}  // namespace sat::slurm
