#include "sweep/staging.h"

#include <fmt/format.h>
#include <sys/vfs.h>

#include <algorithm>
#include <chrono>

#include "run/interrupt.h"
#include "stage/fetch_split.h"
#include "telemetry/sampler.h"
#include "util/sqlite.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

constexpr double kFetchWaitShare = 0.25;  // of the loop time, waiting for data
constexpr double kFetchBusyShare = 0.5;   // of the cores the run's processes could use

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

// Each path listed (its size and files), not yet copied. Errors: stage::ScanSource's (exit 2, naming the path).
Result<std::vector<StagedSource>> ListSources(const std::vector<std::string>& paths) {
  std::vector<StagedSource> sources;
  for (const std::string& given : paths) {
    auto manifest = stage::ScanSource(given);
    if (!manifest) return manifest.error();
    StagedSource source;
    source.given = StripSlashes(given);
    source.resolved = manifest->source;
    source.bytes = manifest->total_bytes;
    source.files = manifest->file_count;
    sources.push_back(std::move(source));
  }
  return sources;
}

// The store folder: the spec's (or --stage-dir), else the default of this machine.
Result<std::string> StoreRoot(const StageOptions& options) {
  if (!options.dir.empty()) return options.dir;
  std::string root = stage::DefaultStoreRoot();
  if (root.empty()) {
    return UsageError("staging needs a folder for the copies: give --stage-dir or saturate.stage_dir (this user has "
                      "no cache folder: neither XDG_CACHE_HOME nor HOME is set, and no home in the password database)");
  }
  return root;
}

}  // namespace

bool FetchBound(const FetchSignals& s, std::string* why) {
  const double usable = std::max(1u, std::min(s.processes, s.cores));
  const std::optional<double> busy = s.cpu_pct ? std::optional(*s.cpu_pct / (100 * usable)) : std::nullopt;
  if (s.wait_share < kFetchWaitShare) {
    *why = fmt::format("the first run waited for data {} of its loop time: its loader keeps up",
                       FormatShare(s.wait_share));
    return false;
  }
  if (!busy) {
    *why = fmt::format("the first run waited for data {} of its loop time, but its CPU use is unknown",
                       FormatShare(s.wait_share));
    return false;
  }
  if (s.blocked && s.samples_per_s > 0) {
    stage::LoaderActivity a;
    a.samples_per_s = s.samples_per_s;
    a.processes = std::max(1.0, s.workers);
    a.cpu_cores = *s.cpu_pct / 100;
    a.blocked = *s.blocked;
    a.data_wait_share = s.wait_share;
    if (std::optional<stage::LoaderTimeSplit> split = stage::SplitLoaderTime(a)) {
      const bool bound = stage::FetchBound(*split);
      *why = fmt::format("the first run waited for data {} of its loop time, its loading split {} fetching (waiting "
                         "on reads) and {} preparing on the CPU: {}",
                         FormatShare(s.wait_share), FormatShare(split->fetch), FormatShare(split->prep),
                         bound ? "its loader waits on storage"
                               : "its loader computes (decoding, transforms) or waits elsewhere, a copy would not help");
      return bound;
    }
  }
  if (*busy >= kFetchBusyShare) {
    *why = fmt::format("the first run waited for data {} of its loop time while its {} process{} kept {} of the "
                       "cores they could use busy: its loader computes (decoding, transforms), a copy would not help",
                       FormatShare(s.wait_share), s.processes, s.processes == 1 ? "" : "es", FormatShare(*busy));
    return false;
  }
  *why = fmt::format("the first run waited for data {} of its loop time while its {} process{} kept only {} of the "
                     "cores they could use busy: its loader waits on storage",
                     FormatShare(s.wait_share), s.processes, s.processes == 1 ? "" : "es", FormatShare(*busy));
  return true;
}

Result<std::unique_ptr<Stager>> Stager::Start(const StageOptions& options) {
  std::unique_ptr<Stager> stager(new Stager());
  stager->options_ = options;
  // Every source is listed now, so that a wrong path stops the sweep before its first run.
  auto sources = ListSources(options.paths);
  if (!sources) return sources.error();
  stager->sources_ = std::move(*sources);
  auto root = StoreRoot(options);
  if (!root) return root.error();
  stager->root_ = std::move(*root);
  switch (options.policy) {
    case StagePolicy::kNever:
      stager->decision_ = "source";
      stager->reason_ = "stage_policy is never";
      break;
    case StagePolicy::kAlways:
      stager->BeginCopy("stage_policy is always");
      break;
    case StagePolicy::kAuto: {
      // Copies the store has already cost nothing: use them.
      stage::StoreOptions store;
      store.root = stager->root_;
      store.verify_checksums = options.verify_checksums;
      std::vector<stage::Lease> found;
      for (const StagedSource& s : stager->sources_) {
        auto lease = stage::FindCopy(s.given, store);
        if (!lease) return lease.error();
        if (!*lease) break;
        found.push_back(std::move(**lease));
      }
      if (found.size() == stager->sources_.size()) {
        stager->copied_ = std::move(found);
        stager->decision_ = "copying";
        stager->reason_ = "the store holds a copy already";
      }
      break;
    }
  }
  return stager;
}

Stager::~Stager() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
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
    stage::StoreOptions store;
    store.root = root_;
    store.cap_bytes = options_.cap_bytes;
    store.verify_checksums = options_.verify_checksums;
    // The sweep's end, or Ctrl-C / SIGTERM at once (the controller's loop may be waiting on nothing else).
    store.cancelled = [this] { return cancel_.load() || run::Interrupted(); };
    // Progress over every source: the bytes of the sources done, plus the current one's.
    uint64_t before = 0, total = 0;
    size_t files_before = 0, files_total = 0;
    for (const StagedSource& s : sources_) {
      total += s.bytes;
      files_total += s.files;
    }
    store.on_progress = [&](const stage::Progress& p) {
      std::lock_guard<std::mutex> lock(mu_);
      progress_ = p;
      progress_.bytes_done += before;
      progress_.files_done += files_before;
      progress_.bytes_total = std::max(total, before + p.bytes_total);
      progress_.files_total = std::max(files_total, files_before + p.files_total);
      progress_.elapsed_s = telemetry::MonotonicSeconds() - copy_t0_;
      if (p.phase == stage::Progress::Phase::kDone && before + p.bytes_total < total) {
        progress_.phase = stage::Progress::Phase::kCopying;
      }
    };
    std::vector<stage::Lease> leases;
    for (const StagedSource& s : sources_) {
      auto lease = stage::Acquire(s.given, store);
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
  if (decision_ == "copying") return false;
  if (decision_ == "undecided") return live == 0 && started == 0;
  return true;
}

bool Stager::Undecided() const { return decision_ == "undecided"; }

void Stager::Judge(const FetchSignals& signals) {
  if (decision_ != "undecided") return;
  std::string why;
  if (FetchBound(signals, &why)) {
    BeginCopy(why);
  } else {
    decision_ = "source";
    reason_ = why;
  }
}

Result<std::optional<std::string>> Stager::Poll() {
  std::optional<Result<std::vector<stage::Lease>>> copied;
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
    const stage::Lease& lease = leases_[i];
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_.phase = stage::Progress::Phase::kDone;
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

Result<NodeStaging> StageOnNode(const StageOptions& options, std::vector<stage::Lease>* leases) {
  NodeStaging staging;
  auto sources = ListSources(options.paths);
  if (!sources) return sources.error();
  staging.sources = std::move(*sources);
  bool copy = options.policy == StagePolicy::kAlways;
  for (const StagedSource& source : staging.sources) {
    struct statfs fs {};
    if (options.policy == StagePolicy::kAuto && statfs(source.resolved.c_str(), &fs) == 0 &&
        sqlite::IsNetworkFileSystem(static_cast<long>(fs.f_type))) {
      copy = true;
    }
  }
  if (!copy) {
    staging.note = options.policy == StagePolicy::kNever ? "stage_policy is never"
                                                         : "the data is on a local filesystem of this node";
    return staging;
  }
  stage::StoreOptions store;
  auto root = StoreRoot(options);
  if (!root) return root.error();
  store.root = std::move(*root);
  store.cap_bytes = options.cap_bytes;
  store.verify_checksums = options.verify_checksums;
  store.cancelled = [] { return run::Interrupted(); };
  std::vector<std::string> parts;
  for (StagedSource& s : staging.sources) {
    auto lease = stage::Acquire(s.given, store);
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

nlohmann::json StageOptionsJson(const StageOptions& o) {
  return {{"paths", o.paths},          {"policy", StagePolicyName(o.policy)},  {"dir", o.dir},
          {"cap_bytes", o.cap_bytes}, {"verify_checksums", o.verify_checksums}};
}

StageOptions StageOptionsFromJson(const nlohmann::json& j) {
  StageOptions o;
  if (!j.is_object()) return o;
  o.paths = j.value("paths", std::vector<std::string>{});
  o.policy = ParseStagePolicy(j.value("policy", "auto")).value_or(StagePolicy::kAuto);
  o.dir = j.value("dir", "");
  o.cap_bytes = j.value("cap_bytes", uint64_t{0});
  o.verify_checksums = j.value("verify_checksums", false);
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
  const stage::Progress& p = r.progress;
  return {{"policy", StagePolicyName(r.policy)},
          {"decision", r.decision},
          {"reason", r.reason},
          {"store", r.store},
          {"sources", std::move(sources)},
          {"progress",
           {{"phase", stage::PhaseName(p.phase)},
            {"bytes_done", p.bytes_done},
            {"bytes_total", p.bytes_total},
            {"files_done", p.files_done},
            {"files_total", p.files_total},
            {"elapsed_s", p.elapsed_s}}},
          {"copy_wall_s", r.copy_wall_s},
          {"source_samples_per_s", opt(r.source_rate)},
          {"copy_samples_per_s", opt(r.copy_rate)},
          {"saved_s", opt(r.saved_s)}};
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
    for (auto ph : {stage::Progress::Phase::kScanning, stage::Progress::Phase::kWaiting,
                    stage::Progress::Phase::kCopying, stage::Progress::Phase::kVerifying,
                    stage::Progress::Phase::kDone}) {
      if (phase == stage::PhaseName(ph)) r.progress.phase = ph;
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
  const stage::Progress& p = r.progress;
  if (r.decision == "copying") {
    const double rate = p.elapsed_s > 0 ? p.bytes_done / p.elapsed_s : 0;
    const std::string eta = rate > 0 && p.bytes_total > p.bytes_done
                                ? fmt::format(", ETA {:.0f} s", (p.bytes_total - p.bytes_done) / rate)
                                : "";
    return fmt::format("Staging: {} {} of {} ({} of {} files) at {}/s{}, to {}; runs wait for the copy\n",
                       stage::PhaseName(p.phase), FormatBytes(static_cast<double>(p.bytes_done)),
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
  return text + "\n";
}

}  // namespace sat::sweep
