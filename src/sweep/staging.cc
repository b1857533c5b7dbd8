#include "sweep/staging.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include "run/interrupt.h"
#include "telemetry/page_cache.h"
#include "telemetry/sampler.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

// The cold reads' sample of the first source: files at most this large (a dataset of a few huge files is read by
// bandwidth, not by round trips), so many of them, so many bytes.
constexpr uint64_t kColdReadLargestFile = 64ull << 20;
constexpr size_t kColdReadFiles = 16;
constexpr uint64_t kColdReadBytes = 16ull << 20;
constexpr size_t kSampleListed = 1024;  // files of the first source kept to sample from

std::string StripSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// `item` with `from` (a path) swapped for `to` where the item is the path or starts with it and a '/'.
std::optional<std::string> SwapPath(const std::string& item, const std::string& from, const std::string& to) {
  if (item == from) return to;
  if (item.size() > from.size() && item.starts_with(from) && item[from.size()] == '/') {
    return to + item.substr(from.size());
  }
  return std::nullopt;
}

// Each path listed (its size and files), not yet copied; `sample` (may be null) gets up to kSampleListed files of the
// first, evenly across it, small enough for the cold reads. Errors: datastore::ScanSource's (exit 2, naming the path).
Result<std::vector<StagedSource>> ListSources(const std::vector<std::string>& paths,
                                             std::vector<std::string>* sample = nullptr) {
  std::vector<StagedSource> sources;
  for (const std::string& given : paths) {
    auto manifest = datastore::ScanSource(given);
    if (!manifest) return manifest.error();
    StagedSource source;
    source.given = StripSlashes(given);
    source.resolved = manifest->source;
    source.bytes = manifest->total_bytes;
    source.files = manifest->file_count;
    if (sample != nullptr && sources.empty()) {
      std::vector<std::string> files;
      for (const datastore::Entry& e : manifest->entries) {
        if (e.type != datastore::Entry::Type::kFile || e.size > kColdReadLargestFile) continue;
        files.push_back(manifest->single_file ? manifest->source : manifest->source + "/" + e.rel);
      }
      *sample = telemetry::EvenSample(files, kSampleListed);
    }
    sources.push_back(std::move(source));
  }
  return sources;
}

// The device of `path`, or of its nearest existing folder above (the store folder may not be made yet).
std::optional<dev_t> DeviceOf(std::string path) {
  while (!path.empty()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return st.st_dev;
    const std::string parent = std::filesystem::path(path).parent_path().string();
    if (parent == path) break;
    path = parent;
  }
  return std::nullopt;
}

// The store folder: the spec's (or --stage-dir), else the default of this machine.
Result<std::string> StoreRoot(const StagingOptions& options) {
  if (!options.dir.empty()) return options.dir;
  std::string root = datastore::DefaultStoreRoot();
  if (root.empty()) {
    return UsageError("staging needs a folder for the copies: give --stage-dir or saturate.stage_dir (this user has "
                      "no cache folder: neither XDG_CACHE_HOME nor HOME is set, and no home in the password database)");
  }
  return root;
}

}  // namespace

datastore::StorageEvidence EvidenceOf(const FetchSignals& s, datastore::MountKind mount,
                                  const std::optional<datastore::ColdReadComparison>& cold) {
  datastore::StorageEvidence e;
  e.loader.samples_per_s = s.samples_per_s;
  // Workers load; without (fewer than half a worker on average) the trainer loads within its data wait.
  e.loader.in_trainer = s.workers < 0.5;
  e.loader.processes = e.loader.in_trainer ? 1 : s.workers;
  if (s.cpu_pct) e.loader.cpu_cores = *s.cpu_pct / 100;
  e.loader.blocked = s.blocked;
  e.loader.data_wait_share = s.wait_share;
  e.mount = mount;
  e.cold = cold;
  e.cores = s.cores;
  return e;
}

std::string JudgementText(const FetchSignals& s, const datastore::StorageWait& w) {
  std::string text = fmt::format("the first run waited for data {} of its loop time", FormatShare(s.wait_share));
  if (w.split) text += "; its loading: " + datastore::SplitClause(*w.split);
  return text + ": " + datastore::FindingText(w);
}

RestartChoice ChooseRestart(const RunProgress& p, double copy_rate) {
  RestartChoice c;
  if (!(p.samples_per_s > 0) || !(copy_rate > p.samples_per_s)) {
    c.why = "no faster rate on the copy is known";
    return c;
  }
  const double done = std::max(0.0, p.samples);
  double total = 2 * done;
  std::string length = "its length unknown, taken as twice what it has trained";
  if (p.epoch_samples && *p.epoch_samples > 0) {
    const double epoch = *p.epoch_samples;
    total = std::max(epoch, std::ceil(done / epoch) * epoch);
    length = fmt::format("at least the {} samples of its epoch", GroupThousands(static_cast<uint64_t>(epoch)));
  }
  c.finish_s = (total - done) / p.samples_per_s;
  c.restart_s = std::max(0.0, p.startup_s) + total / copy_rate;
  c.restart = c.restart_s <= kRestartShare * c.finish_s;
  c.why = fmt::format("~{:.0f} s left on the source at {} against ~{:.0f} s for a new attempt on the copy ({:.1f} s "
                      "of start-up and {} samples at ~{}; {})",
                      c.finish_s, FormatRate(p.samples_per_s), c.restart_s, p.startup_s,
                      GroupThousands(static_cast<uint64_t>(total)), FormatRate(copy_rate), length);
  return c;
}

Result<std::unique_ptr<Stager>> Stager::Start(const StagingOptions& options, const StagerSeams& seams) {
  std::unique_ptr<Stager> stager(new Stager());
  stager->start_t_ = telemetry::MonotonicSeconds();
  stager->options_ = options;
  stager->seams_ = seams;
  // Every source is listed now, so that a wrong path stops the sweep before its first run.
  auto sources = ListSources(options.paths, &stager->sample_files_);
  if (!sources) return sources.error();
  stager->sources_ = std::move(*sources);
  auto root = StoreRoot(options);
  if (!root) return root.error();
  stager->root_ = std::move(*root);
  switch (options.policy) {
    case StagePolicy::kNever:
      stager->judged_ = true;
      stager->decision_ = "source";
      stager->reason_ = "stage_policy is never";
      break;
    case StagePolicy::kAlways:
      stager->judged_ = true;
      stager->BeginCopy("stage_policy is always");
      break;
    case StagePolicy::kAuto: {
      // Copies the store has already cost nothing: use them.
      datastore::StoreOptions store;
      store.root = stager->root_;
      store.verify_checksums = options.verify_checksums;
      std::vector<datastore::Lease> found;
      for (const StagedSource& s : stager->sources_) {
        auto lease = datastore::FindCopy(s.given, store);
        if (!lease) return lease.error();
        if (!*lease) break;
        found.push_back(std::move(**lease));
      }
      if (found.size() == stager->sources_.size()) {
        stager->judged_ = true;
        stager->copied_ = std::move(found);
        stager->decision_ = "copying";
        stager->reason_ = "the store holds a copy already";
        break;
      }
      // A copy on the data's own filesystem would be read from the same drive.
      const std::optional<dev_t> store_dev = DeviceOf(stager->root_);
      const bool same = store_dev && std::all_of(stager->sources_.begin(), stager->sources_.end(),
                                                 [&](const StagedSource& s) { return DeviceOf(s.resolved) == store_dev; });
      if (same && !seams.same_filesystem_ok) {
        stager->judged_ = true;
        stager->decision_ = "source";
        stager->reason_ = fmt::format("the data is on the store's own filesystem ({}): a copy would be read from the "
                                      "same drive",
                                      stager->root_);
        break;
      }
      // Data in memory (tmpfs, ramfs) reads faster than a copy on a drive would; judging a first run alone costs
      // its whole life (its loader never waits on storage, so it is judged at its end).
      const bool in_memory = std::all_of(stager->sources_.begin(), stager->sources_.end(),
                                         [](const StagedSource& s) { return datastore::InMemoryAt(s.resolved); });
      if (in_memory && !seams.same_filesystem_ok) {
        stager->judged_ = true;
        stager->decision_ = "source";
        stager->reason_ = "the data is in memory (tmpfs or ramfs): a copy on a drive would not read faster";
        break;
      }
      stager->mount_ = seams.mount.value_or(datastore::MountKindAt(stager->sources_.front().resolved));
      if (seams.cold_reads) stager->BeginColdReads();
      break;
    }
  }
  return stager;
}

Stager::~Stager() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
  if (cold_thread_.joinable()) cold_thread_.join();
}

void Stager::BeginColdReads() {
  if (sample_files_.empty()) return;
  cold_thread_ = std::thread([this] {
    // The sample's copy goes where the store's copies would: the store's folder (made as the store makes it).
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(root_).parent_path(), ec);
    (void)::mkdir(root_.c_str(), 0700);
    datastore::ColdReadOptions o;
    o.max_files = kColdReadFiles;
    o.max_bytes = kColdReadBytes;
    o.local_dirs = {root_};
    Result<datastore::ColdReadComparison> reads = seams_.cold_reads(sample_files_, o);
    std::lock_guard<std::mutex> lock(mu_);
    cold_ = std::move(reads);
  });
}

void Stager::BeginCopy(const std::string& why) {
  decision_ = "copying";
  reason_ = why;
  copy_t0_ = telemetry::MonotonicSeconds();
  thread_ = std::thread([this] {
    // No exception may leave this thread (std::terminate would abort the sweep): one becomes the copy's failure.
    try {
      CopyAll();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      copied_ = Error{fmt::format("staging failed: internal error: {}", e.what())};
    }
  });
}

void Stager::CopyAll() {
  {  // every source in turn, each a lease on its copy; the first error ends it
    datastore::StoreOptions store;
    store.root = root_;
    store.cap_bytes = options_.cap_bytes;
    store.verify_checksums = options_.verify_checksums;
    // The sweep's end, or Ctrl-C / SIGTERM at once (the controller's loop may be waiting on nothing else).
    store.cancelled = [this] { return cancel_.load() || abandon_.load() || run::Interrupted(); };
    // Progress over every source: the bytes of the sources done, plus the current one's.
    uint64_t before = 0, total = 0;
    size_t files_before = 0, files_total = 0;
    for (const StagedSource& s : sources_) {
      total += s.bytes;
      files_total += s.files;
    }
    store.on_progress = [&](const datastore::Progress& p) {
      std::lock_guard<std::mutex> lock(mu_);
      progress_ = p;
      progress_.bytes_done += before;
      progress_.files_done += files_before;
      progress_.bytes_total = std::max(total, before + p.bytes_total);
      progress_.files_total = std::max(files_total, files_before + p.files_total);
      progress_.elapsed_s = telemetry::MonotonicSeconds() - copy_t0_;
      if (p.phase == datastore::Progress::Phase::kDone && before + p.bytes_total < total) {
        progress_.phase = datastore::Progress::Phase::kCopying;
      }
    };
    std::vector<datastore::Lease> leases;
    for (const StagedSource& s : sources_) {
      auto lease = datastore::Acquire(s.given, store);
      if (!lease) {
        std::lock_guard<std::mutex> lock(mu_);
        copied_ = lease.error();
        return;
      }
      before += lease->bytes();
      files_before += lease->files();
      leases.push_back(std::move(*lease));
    }
    std::lock_guard<std::mutex> lock(mu_);
    copied_ = std::move(leases);
  }
}

bool Stager::MayStart(size_t live, int started) const {
  if (judged_) return decision_ != "copying";
  if (live > 0 || started > 0) return false;
  if (copy_first_) return decision_ != "copying";
  // On a slow mount the cold reads (about a second) may show a copy short enough to make first.
  return !SlowMount() || !cold_thread_.joinable() || cold_seen_ || ColdHoldOver();
}

bool Stager::ColdHoldOver() const { return telemetry::MonotonicSeconds() - start_t_ >= kColdReadHoldS; }

bool Stager::Undecided() const { return !judged_; }

bool Stager::HasNews() const {
  std::lock_guard<std::mutex> lock(mu_);
  // (The first case is exactly what MaybeCopyAtOnce goes on to look at, and then marks seen.)
  return (SlowMount() && !judged_ && decision_ == "undecided" && !cold_seen_ && cold_.has_value()) ||
         (decision_ == "copying" && copied_.has_value());
}

bool Stager::SlowMount() const { return mount_ == datastore::MountKind::kFuse || mount_ == datastore::MountKind::kNetwork; }

bool Stager::MaybeCopyAtOnce() {
  if (judged_ || decision_ != "undecided" || !SlowMount()) return false;
  std::optional<datastore::ColdReadComparison> cold;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cold_) return false;
    cold_seen_ = true;
    if (!*cold_) return false;
    cold = **cold_;
  }
  if (cold->source.files == 0 || cold->local.files == 0 || cold->LocalTimeRatio() > datastore::kCopyFasterRatio) {
    return false;
  }
  auto each = [](const datastore::ColdReadTiming& t) { return t.seconds * 1000 / static_cast<double>(t.files); };
  // The whole copy at the sample's pace, its files read as many at once as the store copies them.
  size_t files = 0;
  uint64_t bytes = 0;
  for (const StagedSource& s : sources_) {
    files += s.files;
    bytes += s.bytes;
  }
  const double copy_s = datastore::CopySecondsAtPace(cold->source, files, bytes) /
                        static_cast<double>(std::clamp<size_t>(files, 1, datastore::StoreOptions{}.threads));
  // The first run was held for the cold reads unless they outlasted kColdReadHoldS (MayStart).
  copy_first_ = copy_s <= options_.copy_first_s && !ColdHoldOver();
  BeginCopy(fmt::format("the cold reads of {} of its files took {:.1f} ms each on the {} mount against {:.2f} ms from "
                        "the store's drive: {}",
                        cold->source.files, each(cold->source), datastore::MountKindName(mount_), each(cold->local),
                        copy_first_
                            ? fmt::format("the copy (~{}) is made before the first run starts", FormatDuration(copy_s))
                            : fmt::format("the copy began at once (~{}), while the first run is judged",
                                          FormatDuration(copy_s))));
  return true;
}

bool Stager::Judge(const FetchSignals& signals, bool final) {
  if (judged_) return true;
  std::optional<datastore::ColdReadComparison> cold;
  std::string cold_why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cold_ && cold_thread_.joinable() && !final) return false;
    if (cold_ && *cold_) cold = **cold_;
    if (cold_ && !*cold_) cold_why = cold_->error().message;
  }
  judged_ = true;
  evidence_ = EvidenceOf(signals, mount_, cold);
  wait_ = datastore::JudgeStorageWait(*evidence_);
  std::string why = JudgementText(signals, *wait_);
  if (!cold_why.empty()) why += fmt::format(" (no cold reads: {})", cold_why);
  const bool copy = wait_->finding == datastore::StorageFinding::kStorage && wait_->copy_helps;
  if (decision_ == "undecided") {
    if (copy) {
      BeginCopy(why);
    } else {
      decision_ = "source";
      reason_ = why;
    }
  } else if (copy) {
    // The copy began at once on the cold reads; the first run confirms it.
    reason_ = why + "; " + reason_;
  } else if (decision_ == "copying") {
    // Begun at once, and not needed: stopped, its partial copy left in the store (a later copy resumes it).
    abandon_ = true;
    decision_ = "source";
    reason_ = why + "; the copy begun at once was stopped";
  } else {
    // Made already (or failed): a complete copy costs nothing more to read.
    reason_ = why + (decision_ == "staged" ? "; the copy begun at once was complete, so the runs read it" : "");
  }
  return true;
}

bool Stager::RestartDue() {
  if (restart_checked_ || !judged_ || decision_ != "staged") return false;
  restart_checked_ = true;
  return true;
}

RestartChoice Stager::OnSource(int64_t index, const std::string& key, const RunProgress& progress) {
  RestartChoice c;
  std::optional<double> copy_rate;
  if (evidence_ && wait_) {
    // What the judgement found a copy saves, at the run's rate now.
    datastore::StorageEvidence now = *evidence_;
    if (progress.samples_per_s > 0) now.loader.samples_per_s = progress.samples_per_s;
    copy_rate = datastore::TrainingOnCopyEstimate(now, *wait_);
  }
  if (copy_rate) {
    c = ChooseRestart(progress, *copy_rate);
  } else {
    c.why = !wait_ || !wait_->copy_time_ratio ? "no rate on the copy could be estimated: no cold reads of a local copy"
                                              : "no rate on the copy could be estimated: the run's rate is unknown";
  }
  on_source_.push_back(RunOnSource{index, key, c.restart, c.why});
  return c;
}

Result<std::optional<std::string>> Stager::Poll() {
  // auto, before the judgement: the cold reads may show a copy worth beginning at once.
  if (MaybeCopyAtOnce()) return std::optional("staging: copying the data to a local drive: " + reason_);
  std::optional<Result<std::vector<datastore::Lease>>> copied;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (decision_ != "copying" || !copied_) return std::optional<std::string>();
    copied = std::move(copied_);
    copied_.reset();
  }
  if (thread_.joinable()) thread_.join();
  if (copy_t0_ > 0) copy_wall_s_ = telemetry::MonotonicSeconds() - copy_t0_;
  if (!*copied) {
    const Error& error = copied->error();
    decision_ = "failed";
    reason_ = error.message;
    if (options_.policy == StagePolicy::kAlways || error.exit_code == kExitInterrupted) return error;
    return std::optional(fmt::format("staging failed, the runs read the source: {}", error.message));
  }
  leases_ = std::move(**copied);
  std::vector<std::string> parts;
  for (size_t i = 0; i < sources_.size() && i < leases_.size(); ++i) {
    StagedSource& s = sources_[i];
    const datastore::Lease& lease = leases_[i];
    s.local = lease.path();
    s.bytes = lease.bytes();
    s.files = lease.files();
    s.reused = lease.reused();
    s.copy_s = lease.copy_s();
    parts.push_back(fmt::format("{} -> {} ({})", s.given, s.local,
                                s.reused ? "the copy there already" : fmt::format("copied in {:.1f} s", s.copy_s)));
    for (const std::string& warning : lease.warnings()) parts.push_back("warning: " + warning);
  }
  decision_ = "staged";
  staged_at_ = telemetry::MonotonicSeconds();
  // Made before the first run: every run reads the copy, so there is nothing left to judge.
  if (copy_first_) judged_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_.phase = datastore::Progress::Phase::kDone;
  }
  return std::optional(fmt::format("staged {}; runs read the local copy", fmt::join(parts, ", ")));
}

bool Stager::Rewrite(std::vector<std::string>* argv, std::map<std::string, std::string>* env) const {
  return PointAtSources(sources_, decision_ == "staged", argv, env);
}

bool PointAtSources(const std::vector<StagedSource>& sources, bool on_copy, std::vector<std::string>* argv,
                    std::map<std::string, std::string>* env) {
  for (size_t i = 0; i < sources.size(); ++i) {
    const StagedSource& s = sources[i];
    const std::string& target = on_copy ? s.local : s.given;
    (*env)[fmt::format("SATURATE_STAGED_{}", i)] = target;
    const std::string macro = fmt::format("${{stage:{}}}", i);
    for (std::string& item : *argv) {
      for (size_t pos = item.find(macro); pos != std::string::npos; pos = item.find(macro, pos + target.size())) {
        item.replace(pos, macro.size(), target);
      }
      if (!on_copy) continue;
      // The path itself, a path below it, or --flag=PATH.
      const size_t eq = item.find('=');
      for (const std::string& from : {s.given, s.resolved}) {
        if (auto swapped = SwapPath(item, from, s.local)) {
          item = *swapped;
          break;
        }
        if (eq != std::string::npos) {
          if (auto swapped = SwapPath(item.substr(eq + 1), from, s.local)) {
            item = item.substr(0, eq + 1) + *swapped;
            break;
          }
        }
      }
    }
  }
  return on_copy;
}

Result<NodeStaging> StageOnNode(const StagingOptions& options, std::vector<datastore::Lease>* leases) {
  NodeStaging staging;
  auto sources = ListSources(options.paths);
  if (!sources) return sources.error();
  staging.sources = std::move(*sources);
  bool copy = options.policy == StagePolicy::kAlways;
  for (const StagedSource& source : staging.sources) {
    const datastore::MountKind kind = datastore::MountKindAt(source.resolved);
    if (options.policy == StagePolicy::kAuto && (kind == datastore::MountKind::kNetwork || kind == datastore::MountKind::kFuse)) {
      copy = true;
    }
  }
  if (!copy) {
    staging.note = options.policy == StagePolicy::kNever ? "stage_policy is never"
                                                         : "the data is on a local filesystem of this node";
    return staging;
  }
  datastore::StoreOptions store;
  auto root = StoreRoot(options);
  if (!root) return root.error();
  store.root = std::move(*root);
  store.cap_bytes = options.cap_bytes;
  store.verify_checksums = options.verify_checksums;
  store.cancelled = [] { return run::Interrupted(); };
  std::vector<std::string> parts;
  for (StagedSource& s : staging.sources) {
    auto lease = datastore::Acquire(s.given, store);
    if (!lease) return lease.error();
    s.local = lease->path();
    s.reused = lease->reused();
    s.copy_s = lease->copy_s();
    parts.push_back(fmt::format("{} -> {} ({})", s.given, s.local,
                                s.reused ? "the copy there already" : fmt::format("copied in {:.1f} s", s.copy_s)));
    for (const std::string& warning : lease->warnings()) parts.push_back("warning: " + warning);
    leases->push_back(std::move(*lease));
  }
  staging.on_copy = true;
  staging.note = fmt::format("staged {}", fmt::join(parts, ", "));
  return staging;
}

nlohmann::json StagingOptionsJson(const StagingOptions& o) {
  return {{"paths", o.paths},          {"policy", StagePolicyName(o.policy)},  {"dir", o.dir},
          {"cap_bytes", o.cap_bytes}, {"verify_checksums", o.verify_checksums},
          {"copy_first_s", o.copy_first_s}};
}

StagingOptions StagingOptionsFromJson(const nlohmann::json& j) {
  StagingOptions o;
  if (!j.is_object()) return o;
  o.paths = j.value("paths", std::vector<std::string>{});
  o.policy = ParseStagePolicy(j.value("policy", "auto")).value_or(StagePolicy::kAuto);
  o.dir = j.value("dir", "");
  o.cap_bytes = j.value("cap_bytes", uint64_t{0});
  o.verify_checksums = j.value("verify_checksums", false);
  o.copy_first_s = j.value("copy_first_s", o.copy_first_s);
  return o;
}

void Stager::AddRate(bool on_copy, double samples_per_s) {
  if (!(samples_per_s > 0)) return;
  (on_copy ? copy_sum_ : source_sum_) += samples_per_s;
  ++(on_copy ? copy_n_ : source_n_);
}

StagingReport Stager::Report() const {
  StagingReport r;
  r.policy = options_.policy;
  r.decision = decision_;
  r.reason = reason_;
  r.store = root_;
  r.sources = sources_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    r.progress = progress_;
  }
  if (source_n_ > 0) r.source_rate = source_sum_ / source_n_;
  if (copy_n_ > 0) r.copy_rate = copy_sum_ / copy_n_;
  r.copy_wall_s = decision_ == "copying" && copy_t0_ > 0 ? telemetry::MonotonicSeconds() - copy_t0_ : copy_wall_s_;
  r.on_source = on_source_;
  if (r.source_rate && r.copy_rate && staged_at_ > 0) {
    const double after = telemetry::MonotonicSeconds() - staged_at_;
    r.saved_s = after * (*r.copy_rate / *r.source_rate - 1) - r.copy_wall_s;
  }
  return r;
}

nlohmann::json StagingJson(const StagingReport& r) {
  nlohmann::json sources = nlohmann::json::array();
  for (const StagedSource& s : r.sources) {
    sources.push_back({{"path", s.given},
                       {"resolved", s.resolved},
                       {"local", s.local.empty() ? nlohmann::json() : nlohmann::json(s.local)},
                       {"bytes", s.bytes},
                       {"files", s.files},
                       {"reused", s.reused},
                       {"copy_s", s.copy_s}});
  }
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json on_source = nlohmann::json::array();
  for (const RunOnSource& o : r.on_source) {
    on_source.push_back({{"index", o.index}, {"key", o.key}, {"restarted", o.restarted}, {"why", o.why}});
  }
  const datastore::Progress& p = r.progress;
  return {{"policy", StagePolicyName(r.policy)},
          {"decision", r.decision},
          {"reason", r.reason},
          {"store", r.store},
          {"sources", std::move(sources)},
          {"progress",
           {{"phase", datastore::PhaseName(p.phase)},
            {"bytes_done", p.bytes_done},
            {"bytes_total", p.bytes_total},
            {"files_done", p.files_done},
            {"files_total", p.files_total},
            {"elapsed_s", p.elapsed_s}}},
          {"copy_wall_s", r.copy_wall_s},
          {"source_samples_per_s", opt(r.source_rate)},
          {"copy_samples_per_s", opt(r.copy_rate)},
          {"saved_s", opt(r.saved_s)},
          {"on_source", std::move(on_source)}};
}

std::optional<StagingReport> StagingFromJson(const nlohmann::json& j) {
  try {
    StagingReport r;
    r.policy = ParseStagePolicy(j.at("policy").get<std::string>()).value_or(StagePolicy::kAuto);
    r.decision = j.at("decision").get<std::string>();
    r.reason = j.at("reason").get<std::string>();
    r.store = j.at("store").get<std::string>();
    for (const auto& s : j.at("sources")) {
      StagedSource source;
      source.given = s.at("path").get<std::string>();
      source.resolved = s.at("resolved").get<std::string>();
      if (!s.at("local").is_null()) source.local = s.at("local").get<std::string>();
      source.bytes = s.at("bytes").get<uint64_t>();
      source.files = s.at("files").get<size_t>();
      source.reused = s.at("reused").get<bool>();
      source.copy_s = s.at("copy_s").get<double>();
      r.sources.push_back(std::move(source));
    }
    const auto& p = j.at("progress");
    const std::string phase = p.at("phase").get<std::string>();
    for (auto ph : {datastore::Progress::Phase::kScanning, datastore::Progress::Phase::kWaiting,
                    datastore::Progress::Phase::kCopying, datastore::Progress::Phase::kVerifying,
                    datastore::Progress::Phase::kDone}) {
      if (phase == datastore::PhaseName(ph)) r.progress.phase = ph;
    }
    r.progress.bytes_done = p.at("bytes_done").get<uint64_t>();
    r.progress.bytes_total = p.at("bytes_total").get<uint64_t>();
    r.progress.files_done = p.at("files_done").get<size_t>();
    r.progress.files_total = p.at("files_total").get<size_t>();
    r.progress.elapsed_s = p.at("elapsed_s").get<double>();
    r.copy_wall_s = j.at("copy_wall_s").get<double>();
    if (!j.at("source_samples_per_s").is_null()) r.source_rate = j["source_samples_per_s"].get<double>();
    if (!j.at("copy_samples_per_s").is_null()) r.copy_rate = j["copy_samples_per_s"].get<double>();
    if (j.contains("saved_s") && !j["saved_s"].is_null()) r.saved_s = j["saved_s"].get<double>();
    if (j.contains("on_source")) {
      for (const auto& o : j["on_source"]) {
        r.on_source.push_back(RunOnSource{o.at("index").get<int64_t>(), o.at("key").get<std::string>(),
                                          o.at("restarted").get<bool>(), o.at("why").get<std::string>()});
      }
    }
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string StagingText(const StagingReport& r) {
  std::vector<std::string> names;
  uint64_t bytes = 0;
  size_t files = 0;
  for (const StagedSource& s : r.sources) {
    names.push_back(s.given);
    bytes += s.bytes;
    files += s.files;
  }
  const std::string what = fmt::format("{} ({} file{}, {})", fmt::join(names, ", "), GroupThousands(files),
                                       files == 1 ? "" : "s", FormatBytes(static_cast<double>(bytes)));
  const datastore::Progress& p = r.progress;
  if (r.decision == "copying") {
    const double rate = p.elapsed_s > 0 ? p.bytes_done / p.elapsed_s : 0;
    const std::string eta = rate > 0 && p.bytes_total > p.bytes_done
                                ? fmt::format(", ETA {:.0f} s", (p.bytes_total - p.bytes_done) / rate)
                                : "";
    return fmt::format("Staging: {} {} of {} ({} of {} files) at {}/s{}, to {}; runs wait for the copy\n",
                       datastore::PhaseName(p.phase), FormatBytes(static_cast<double>(p.bytes_done)),
                       FormatBytes(static_cast<double>(p.bytes_total)), GroupThousands(p.files_done),
                       GroupThousands(p.files_total), FormatBytes(rate), eta, r.store);
  }
  if (r.decision == "undecided") {
    return fmt::format("Staging: {}: the first run decides (stage_policy auto)\n", what);
  }
  if (r.decision == "source" || r.decision == "failed") {
    return fmt::format("Staging: {} not copied, runs read the source: {}\n", what, r.reason);
  }
  const bool reused = std::all_of(r.sources.begin(), r.sources.end(), [](const StagedSource& s) { return s.reused; });
  std::string text = fmt::format("Staging: {} {} {}; ", what, reused ? "found in the store at" : "copied to",
                                 r.sources.empty() ? r.store : r.sources.front().local);
  text += reused ? "no copy needed" : fmt::format("the copy took {:.1f} s of the sweep", r.copy_wall_s);
  text += fmt::format(" ({})", r.reason);
  if (r.source_rate && r.copy_rate) {
    text += fmt::format("; runs on the copy trained at {} against {} on the source ({})", FormatRate(*r.copy_rate),
                        FormatRate(*r.source_rate), FormatTimes(*r.copy_rate / *r.source_rate));
  }
  if (r.saved_s) {
    text += *r.saved_s >= 0 ? fmt::format(", about {:.0f} s of makespan saved net of the copy", *r.saved_s)
                            : fmt::format(", about {:.0f} s of makespan lost to the copy", -*r.saved_s);
  }
  for (const RunOnSource& o : r.on_source) {
    text += fmt::format("; run {} ({}) {} ({})", o.index, o.key,
                        o.restarted ? "was restarted on the copy" : "finished on the source", o.why);
  }
  return text + "\n";
}

}  // namespace sat::sweep
