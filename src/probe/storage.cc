#include "probe/storage.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "probe/stage_reading.h"
#include "util/strings.h"

namespace sat::probe {
namespace {

using nlohmann::ordered_json;

// A command-line path that may be data: not code, not a program (the script without a .py suffix is executable).
bool MayBeData(const std::string& path) {
  if (core::IsCodeOrSystemFile(path)) return false;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && (st.st_mode & 0111) == 0);
}

ordered_json ResidencyJson(const std::optional<telemetry::ResidencySample>& pc) {
  if (!pc) return nullptr;
  std::optional<double> share = pc->Share();
  return {{"files", pc->files},
          {"unreadable", pc->unreadable},
          {"bytes", pc->bytes},
          {"cached_bytes", pc->cached_bytes},
          {"share", share ? ordered_json(*share) : ordered_json(nullptr)}};
}

// "25% of a sample of 64 data files (256 KiB) was cached before the loader stage (1 more could not be read)".
std::string ResidencyText(const telemetry::ResidencySample& pc, const std::string& what, const std::string& where,
                          const std::string& when) {
  std::optional<double> share = pc.Share();
  return fmt::format("{} of a sample of {} {}{}{} ({}) was cached {}{}", share ? FormatShare(*share) : std::string("n/a"),
                     pc.files, what, pc.files == 1 ? "" : "s", where, FormatBytes(static_cast<double>(pc.bytes)), when,
                     pc.unreadable > 0 ? fmt::format(" ({} more could not be read)", pc.unreadable) : "");
}

std::string SplitText(const LoaderTimeSplit& s) {
  std::vector<std::string> per_sample;
  if (s.cpu_s_per_sample) per_sample.push_back(fmt::format("{:.2f} ms of CPU", *s.cpu_s_per_sample * 1000));
  if (s.bytes_per_sample) per_sample.push_back(FormatBytes(*s.bytes_per_sample) + " read");
  std::string tail = per_sample.empty() ? "" : fmt::format(" ({} per sample)", JoinNonEmpty(per_sample, " and "));
  return datastore::SplitClause(s) + tail;
}

std::string_view BasisName(datastore::FetchBasis b) {
  switch (b) {
    case datastore::FetchBasis::kBlocked: return "blocked";
    case datastore::FetchBasis::kColdReads: return "cold_reads";
    case datastore::FetchBasis::kOffCpuOnMount: return "off_cpu_on_mount";
    case datastore::FetchBasis::kNone: break;
  }
  return "none";
}

ordered_json SplitJson(const std::optional<LoaderTimeSplit>& s) {
  if (!s) return nullptr;
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  return {{"fetch", s->fetch},
          {"prep", s->prep},
          {"other", s->other},
          {"basis", BasisName(s->basis)},
          {"cpu_s_per_sample", opt(s->cpu_s_per_sample)},
          {"bytes_per_sample", opt(s->bytes_per_sample)},
          {"read_s_per_sample", opt(s->read_s_per_sample)},
          {"copy_saves", opt(s->copy_saves)}};
}

// The stage measured enough steady data for the rule to read it.
bool Judgeable(const core::StageResult& s) { return core::StageMeasured(s) && EnoughSteadyData(s); }

std::optional<LoaderTimeSplit> SplitOf(const ProbeResult& r, const core::StageResult& s) {
  if (!Judgeable(s)) return std::nullopt;
  return datastore::JudgeStorageWait(StorageEvidenceOf(r, s)).split;
}

ordered_json ColdTimingJson(const datastore::ColdReadTiming& t) {
  return {{"files", t.files}, {"bytes", t.bytes}, {"seconds", t.seconds}, {"cpu_seconds", t.cpu_seconds}};
}

// "32 files (1.9 MiB) read cold: 45.1 ms each from the mount, 0.2 ms from a copy in /root/.cache/saturate".
std::string ColdReadsText(const datastore::ColdReadComparison& c) {
  auto each = [](const datastore::ColdReadTiming& t) {
    return t.files > 0 ? fmt::format("{:.1f} ms", t.seconds * 1000 / static_cast<double>(t.files)) : std::string("?");
  };
  return fmt::format("{} file{} ({}) read cold: {} each from the mount, {} from a copy in {}", c.source.files,
                     c.source.files == 1 ? "" : "s", FormatBytes(static_cast<double>(c.source.bytes)), each(c.source),
                     each(c.local), c.local_dir);
}

std::string WhereText(const core::DataLocation& loc) {
  if (loc.mount_point.empty()) return "an unknown filesystem";
  return fmt::format("{} ({}, {})", loc.mount_point, loc.fs_type, loc.network ? "network" : "local");
}

// The mount holding most of the data, in words: "/mnt/data (fuse.sshfs, network filesystem)", "/mnt/s3 (fuse.s3x,
// FUSE)".
std::string DataPlace(const ProbeResult& r) {
  if (r.data_locations.empty() || r.data_locations.front().mount_point.empty()) return "storage";
  const core::DataLocation& loc = r.data_locations.front();
  const datastore::MountKind kind = datastore::MountKindOfType(loc.fs_type, loc.network);
  return fmt::format("{} ({}, {})", loc.mount_point, loc.fs_type,
                     kind == datastore::MountKind::kNetwork ? "network filesystem"
                     : kind == datastore::MountKind::kFuse  ? "FUSE"
                                                        : "local");
}

}  // namespace

ordered_json DataLocationsJson(const std::vector<core::DataLocation>& locations) {
  ordered_json out = ordered_json::array();
  for (const core::DataLocation& loc : locations) {
    out.push_back({{"path", loc.path},
                   {"file_count", loc.file_count},
                   {"mount_point", loc.mount_point},
                   {"fs_type", loc.fs_type},
                   {"device", loc.device},
                   {"network", loc.network}});
  }
  return out;
}

std::string FetchStallCause(const ProbeResult& r, const LoaderTimeSplit& split) {
  const std::string basis = datastore::FetchBasisText(split);
  return fmt::format("fetch stalls: the loader waits on {} {} of its time{}", DataPlace(r), FormatShare(split.fetch),
                     basis.empty() ? "" : " (" + basis + ")");
}

std::string StorageNext(const ProbeResult& r, const StorageWait& wait) {
  if (wait.copy_helps && r.storage.local_copy) return LocalCopyNext(*r.storage.local_copy);
  if (!wait.copy_helps && wait.copy_time_ratio && *wait.copy_time_ratio <= datastore::kCopyFasterRatio &&
      wait.split && wait.split->copy_saves) {
    return fmt::format("faster storage, or cheaper reads (a local copy would save only {} of the loader's time)",
                       FormatShare(*wait.split->copy_saves));
  }
  if (!wait.copy_helps && wait.copy_time_ratio) {
    return fmt::format("faster storage (a local copy read its files in {} of the time: no faster)",
                       FormatShare(*wait.copy_time_ratio));
  }
  if (!wait.copy_helps && wait.mount == datastore::MountKind::kLocal) return "a faster drive (the data is on a local one)";
  return "stage the data on a local disk / faster storage";
}

std::string MoreReadersTail(const MoreReaders& m) {
  return fmt::format(": ~{} if the mount serves {} reads at once", FormatRate(m.samples_per_s), m.workers);
}

std::string LocalCopyNext(const LocalCopyWhatIf& w) {
  std::string cost =
      w.total_bytes && w.copy_s
          ? fmt::format(" ({}, ~{})", FormatBytes(static_cast<double>(*w.total_bytes)), FormatRoughDuration(*w.copy_s))
          : "";
  return fmt::format("copy the data to a local disk{}: the loader alone would reach ~{}", cost,
                     FormatRate(w.Headline()));
}

std::vector<std::string> StorageNotes(const ProbeResult& r) {
  std::vector<std::string> notes;
  const StorageFindings& st = r.storage;
  const StorageWait wait = StorageWaitOf(r);
  std::optional<double> cached;
  if (st.page_cache) cached = st.page_cache->Share();
  bool remote = std::any_of(r.data_locations.begin(), r.data_locations.end(),
                            [](const core::DataLocation& l) { return l.network; });
  if (wait.split && wait.finding != StorageFinding::kStorage && remote) {
    notes.push_back(
        fmt::format("the loader waited on the network filesystem only {} of its time{}: it is not what "
                    "holds the run back now",
                    FormatShare(wait.split->fetch),
                    cached ? fmt::format(" (the page cache held {} of the data)", FormatShare(*cached)) : ""));
  }
  if (cached && *cached >= kWarmCacheShare && !remote && !r.data_locations.empty()) {
    notes.push_back(
        fmt::format("{} of the data was in the page cache when the loader was measured, so the drive "
                    "behind {} was not tested: a cold cache (a fresh node, a first epoch) reads from it",
                    FormatShare(*cached), DataPlace(r)));
  }
  if (st.write_bytes_per_s && *st.write_bytes_per_s >= kHeavyWriteBytesPerS) {
    for (const core::DataLocation& loc : st.write_locations) {
      if (!loc.network) continue;
      notes.push_back(
          fmt::format("the run writes {}/s, to {} ({}, network filesystem) among others: checkpoints and "
                      "logs on a network drive hold up the steps that write them; write them to a local "
                      "disk and copy them off in the background",
                      FormatBytes(*st.write_bytes_per_s), loc.mount_point, loc.fs_type));
    }
  }
  return notes;
}

DataFiles DataFilesOf(const ProbeResult& r, const std::vector<std::string>& path_arguments) {
  DataFiles f;
  std::set<std::string> helper, scanned, writes;
  for (const core::StageResult* s : {&r.full, &r.loader, &r.compute}) {
    helper.insert(s->data_files.begin(), s->data_files.end());
    scanned.insert(s->open_data_paths.begin(), s->open_data_paths.end());
    writes.insert(s->written_files.begin(), s->written_files.end());
  }
  f.opens = r.full.data_opens;
  f.writes.assign(writes.begin(), writes.end());
  if (!helper.empty()) {
    f.source = "helper";
    f.paths.assign(helper.begin(), helper.end());
    return f;
  }
  if (!scanned.empty()) {
    f.source = "scan";
    f.paths.assign(scanned.begin(), scanned.end());
    return f;
  }
  std::set<std::string> args;
  for (const std::string& p : path_arguments) {
    if (MayBeData(p)) args.insert(p);
  }
  if (!args.empty()) {
    f.source = "arguments";
    f.paths.assign(args.begin(), args.end());
  }
  return f;
}

std::vector<std::string> ArgumentDataFiles(const std::vector<std::string>& path_arguments, size_t max_files) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : path_arguments) {
    if (files.size() >= max_files) break;
    if (!MayBeData(p)) continue;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
      continue;
    }
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end && files.size() < max_files; it.increment(ec)) {
      if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path().string());
    }
  }
  return files;
}

LoaderActivity LoaderActivityOf(const core::StageResult& s) {
  const core::StageTelemetry& t = s.telemetry;
  LoaderActivity a;
  a.samples_per_s = core::StageMeasured(s) ? s.estimate.samples_per_s : 0;
  const int workers = StageWorkers(s).value_or(0);
  a.processes = std::max(1, workers);
  if (std::optional<double> cpu = core::MeanOf(t.tree_cpu_pct)) a.cpu_cores = *cpu / 100;
  if (std::optional<double> sys = core::MeanOf(t.tree_sys_cpu_pct)) a.sys_cores = *sys / 100;
  a.blocked = core::MeanOf(t.tree_blocked);
  if (s.kind == core::StageKind::kFull) {
    a.data_wait_share = s.data_wait_share;
    a.in_trainer = workers == 0;
  }
  a.read_per_s = core::MeanOf(t.tree_rchar_per_s);
  a.storage_read_per_s = core::MeanOf(t.tree_read_bytes_per_s);
  return a;
}

StorageEvidence StorageEvidenceOf(const ProbeResult& r, const core::StageResult& s) {
  StorageEvidence e;
  e.loader = LoaderActivityOf(s);
  if (!r.data_locations.empty()) {
    const core::DataLocation& loc = r.data_locations.front();
    e.mount = datastore::MountKindOfType(loc.fs_type, loc.network);
  }
  e.cold = r.storage.cold_reads;
  if (s.data_opens > 0 && s.totals.samples > 0) {
    e.files_per_sample = static_cast<double>(s.data_opens) / s.totals.samples;
  } else if (r.full.data_opens > 0 && r.full.totals.samples > 0) {
    e.files_per_sample = static_cast<double>(r.full.data_opens) / r.full.totals.samples;
  }
  // What the page cache held when this stage read: the loader stage's sample, or the one before the run.
  const std::optional<telemetry::ResidencySample>& cache =
      s.kind == core::StageKind::kLoader ? r.storage.page_cache : r.storage.page_cache_before_run;
  if (cache) e.cached_share = cache->Share();
  e.cores = r.machine.cpu_count;
  return e;
}

StorageWait StorageWaitOf(const ProbeResult& r, const core::StageResult** stage_out) {
  if (stage_out != nullptr) *stage_out = nullptr;
  for (const core::StageResult* s : {&r.loader, &r.full}) {
    if (!Judgeable(*s)) continue;
    StorageWait w = datastore::JudgeStorageWait(StorageEvidenceOf(r, *s));
    if (!w.split && w.finding != StorageFinding::kKeepsUp) continue;
    if (stage_out != nullptr) *stage_out = s;
    return w;
  }
  return {};
}

bool LocalCopyDue(const ProbeResult& r) {
  for (const core::DataLocation& loc : r.data_locations) {
    const datastore::MountKind kind = datastore::MountKindOfType(loc.fs_type, loc.network);
    if (kind == datastore::MountKind::kNetwork || kind == datastore::MountKind::kFuse) return true;
  }
  return StorageWaitOf(r).finding == StorageFinding::kStorage;
}

std::optional<MoreReaders> MoreReadersWhatIf(const ProbeResult& r) {
  const core::StageResult* from = nullptr;
  const StorageWait w = StorageWaitOf(r, &from);
  if (!w.more_readers_help || from == nullptr) return std::nullopt;
  const int64_t now = StageWorkers(r.full).value_or(StageWorkers(*from).value_or(0));
  std::optional<int64_t> next = MoreWorkers(now, r.machine.cpu_count);
  if (!next) return std::nullopt;
  std::optional<double> rate = datastore::MoreReadersEstimate(LoaderActivityOf(*from), static_cast<double>(*next),
                                                          r.machine.cpu_count);
  if (!rate) return std::nullopt;
  return MoreReaders{*next, *rate};
}

std::vector<std::string> StorageLines(const ProbeResult& r) {
  std::vector<std::string> lines;
  const StorageFindings& st = r.storage;
  std::vector<std::string> splits;
  for (const core::StageResult* s : {&r.loader, &r.full}) {
    if (std::optional<LoaderTimeSplit> split = SplitOf(r, *s)) {
      splits.push_back(fmt::format("{} stage {}", core::StageName(s->kind), SplitText(*split)));
    }
  }
  const StorageWait wait = StorageWaitOf(r);
  if (!splits.empty()) {
    lines.push_back("loader time: " + JoinNonEmpty(splits, "; ") +
                    (wait.split ? ": " + datastore::FindingText(wait) : std::string()));
  }
  std::vector<std::string> cache;
  if (st.page_cache_before_run) {
    cache.push_back(
        ResidencyText(*st.page_cache_before_run, "file", " under the command line's paths", "before the run"));
  }
  if (st.page_cache) cache.push_back(ResidencyText(*st.page_cache, "data file", "", "before the loader stage"));
  if (!cache.empty()) lines.push_back("page cache: " + JoinNonEmpty(cache, "; "));
  if (st.cold_reads) lines.push_back("cold reads: " + ColdReadsText(*st.cold_reads));
  if (st.local_copy) {
    lines.push_back("local copy (what-if, measured on a sample): " + LocalCopyText(*st.local_copy));
  } else if (!st.local_copy_why_not.empty()) {
    lines.push_back("local copy (what-if): n/a (" + st.local_copy_why_not + ")");
  }
  if (std::optional<MoreReaders> more = MoreReadersWhatIf(r)) {
    lines.push_back(fmt::format("more workers (what-if): {} reading the mount at once would overlap its round trips: "
                                "~{} (if the mount serves {} reads at once; a local copy removes the round trips)",
                                more->workers, FormatRate(more->samples_per_s), more->workers));
  }
  if (st.write_bytes_per_s && *st.write_bytes_per_s > 0) {
    std::vector<std::string> where;
    for (const core::DataLocation& loc : st.write_locations) where.push_back(WhereText(loc));
    lines.push_back(fmt::format("writes: {}/s in training{}", FormatBytes(*st.write_bytes_per_s),
                                where.empty() ? "" : " to " + JoinNonEmpty(where, ", ")));
  }
  return lines;
}

ordered_json StorageJson(const ProbeResult& r) {
  const StorageFindings& st = r.storage;
  ordered_json writes = DataLocationsJson(st.write_locations);
  const StorageWait wait = StorageWaitOf(r);
  const std::optional<MoreReaders> more = MoreReadersWhatIf(r);
  ordered_json cold = nullptr;
  if (st.cold_reads) {
    cold = {{"source", ColdTimingJson(st.cold_reads->source)},
            {"local", ColdTimingJson(st.cold_reads->local)},
            {"local_dir", st.cold_reads->local_dir}};
  }
  return {{"data_files", {{"source", st.files.source}, {"sample", st.files.paths}, {"opens", st.files.opens}}},
          {"page_cache_before_run", ResidencyJson(st.page_cache_before_run)},
          {"page_cache", ResidencyJson(st.page_cache)},
          {"loader_time", {{"loader", SplitJson(SplitOf(r, r.loader))}, {"full", SplitJson(SplitOf(r, r.full))}}},
          {"finding", datastore::StorageFindingName(wait.finding)},
          {"fetch_bound", wait.finding == StorageFinding::kStorage},
          {"copy_helps", wait.copy_helps},
          {"more_readers", more ? ordered_json{{"workers", more->workers}, {"samples_per_s", more->samples_per_s}}
                                : ordered_json(nullptr)},
          {"cold_reads", std::move(cold)},
          {"local_copy", st.local_copy ? LocalCopyJson(*st.local_copy) : ordered_json(nullptr)},
          {"local_copy_why_not",
           st.local_copy_why_not.empty() ? ordered_json(nullptr) : ordered_json(st.local_copy_why_not)},
          {"writes",
           {{"bytes_per_s", st.write_bytes_per_s ? ordered_json(*st.write_bytes_per_s) : ordered_json(nullptr)},
            {"locations", std::move(writes)}}}};
}

}  // namespace sat::probe
