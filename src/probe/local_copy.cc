#include "probe/local_copy.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "datastore/manifest.h"
#include "util/strings.h"

namespace sat::probe {
namespace {

namespace fs = std::filesystem;

// Data that fits in this share of the available memory stays in the page cache after its first epoch.
constexpr double kFitsInMemoryShare = 0.5;

bool Holds(const std::string& folder, const std::string& path) {
  return path.size() > folder.size() && StartsWith(path, folder) && (folder == "/" || path[folder.size()] == '/');
}

std::string Plural(size_t n, std::string_view word) {
  return fmt::format("{} {}{}", GroupThousands(n), word, n == 1 ? "" : "s");
}

}  // namespace

std::string DataRoot(const std::vector<std::string>& files, const std::vector<std::string>& path_arguments) {
  if (files.empty()) return "";
  for (const std::string& arg : path_arguments) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) continue;
    std::string folder = fs::path(arg).lexically_normal().string();
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    if (std::all_of(files.begin(), files.end(), [&](const std::string& f) { return Holds(folder, f); })) return folder;
  }
  std::string common = fs::path(files.front()).parent_path().string();
  for (const std::string& f : files) {
    while (!common.empty() && common != "/" && !Holds(common, f)) common = fs::path(common).parent_path().string();
  }
  return common.empty() ? "/" : common;
}

std::string FormatRoughDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "n/a";
  if (seconds < 90) return fmt::format("{:.0f} s", std::max(1.0, seconds));
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

Result<LocalCopyWhatIf> LocalCopyFrom(const LocalCopyInputs& in, const datastore::ColdReadComparison& reads) {
  if (!(in.loader.samples_per_s > 0) || !in.loader.cpu_cores) {
    return Error{"the loader stage measured no rate and CPU on the source to start from"};
  }
  LocalCopyWhatIf w;
  w.reads = reads;
  w.loader_now = in.loader.samples_per_s;
  // The CPU a sample's reads cost the reader, from each place.
  auto cpu_per_sample = [&](const datastore::ColdReadTiming& t) {
    return t.files > 0 ? in.files_per_sample * t.cpu_seconds / static_cast<double>(t.files) : 0.0;
  };
  const ReadCpuPerSample read_cpu{cpu_per_sample(w.reads.source), cpu_per_sample(w.reads.local)};
  std::optional<LocalCopyEstimate> estimate = EstimateLocalCopy(in.loader, w.reads.LocalTimeRatio(), read_cpu, in.cores);
  if (!estimate) return Error{"the loader stage measured no CPU time"};
  w.estimate = *estimate;

  // The whole data folder: what a copy would move.
  w.root = DataRoot(in.files, in.path_arguments);
  Result<datastore::Manifest> manifest = datastore::ScanSource(w.root);
  if (manifest) {
    w.total_bytes = manifest->total_bytes;
    w.total_files = manifest->file_count;
    w.copy_s = datastore::CopySecondsAtPace(w.reads.source, manifest->file_count, manifest->total_bytes);
    w.fits_in_memory = in.mem_available_bytes && static_cast<double>(manifest->total_bytes) <=
                                                     kFitsInMemoryShare * static_cast<double>(*in.mem_available_bytes);
  } else {
    w.total_why_not = manifest.error().message;
  }
  return w;
}

std::string LocalCopyText(const LocalCopyWhatIf& w) {
  std::vector<std::string> parts;
  if (w.total_bytes && w.total_files && w.copy_s) {
    parts.push_back(fmt::format("a local copy of {} ({}) takes ~{} on this link", FormatBytes(*w.total_bytes),
                                Plural(*w.total_files, "file"), FormatRoughDuration(*w.copy_s)));
  } else {
    parts.push_back(fmt::format("the size of {} is unknown ({})", w.root, w.total_why_not));
  }
  std::string other =
      w.fits_in_memory ? fmt::format("~{} while the copy is read cold", FormatNumber(w.estimate.cold_samples_per_s))
                       : fmt::format("~{} once it is in the page cache", FormatNumber(w.estimate.warm_samples_per_s));
  std::string vs = w.loader_now > 0 ? fmt::format(", {} today's {}", FormatTimes(w.Headline() / w.loader_now),
                                                  FormatRate(w.loader_now))
                                    : "";
  parts.push_back(fmt::format("the loader alone would reach ~{} ({}){}", FormatRate(w.Headline()), other, vs));
  const datastore::ColdReadComparison& r = w.reads;
  auto each = [](const datastore::ColdReadTiming& t) {
    return t.files > 0 ? fmt::format("{:.1f} ms", t.seconds * 1000 / static_cast<double>(t.files)) : std::string("?");
  };
  std::string basis = fmt::format("cold reads of {} ({}): {} each from the source, {} from a copy in {}",
                                  Plural(r.source.files, "file"), FormatBytes(static_cast<double>(r.source.bytes)),
                                  each(r.source), each(r.local), r.local_dir);
  return JoinNonEmpty(parts, "; ") + " (" + basis + ")";
}

nlohmann::ordered_json LocalCopyJson(const LocalCopyWhatIf& w) {
  auto timing = [](const datastore::ColdReadTiming& t) {
    return nlohmann::ordered_json{
        {"files", t.files}, {"bytes", t.bytes}, {"seconds", t.seconds}, {"cpu_seconds", t.cpu_seconds}};
  };
  auto opt = [](const auto& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); };
  return {{"estimate", true},
          {"root", w.root},
          {"total_bytes", opt(w.total_bytes)},
          {"total_files", opt(w.total_files)},
          {"total_why_not",
           w.total_why_not.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(w.total_why_not)},
          {"copy_s", opt(w.copy_s)},
          {"loader_samples_per_s", w.loader_now},
          {"samples_per_s", w.Headline()},
          {"warm_samples_per_s", w.estimate.warm_samples_per_s},
          {"cold_samples_per_s", w.estimate.cold_samples_per_s},
          {"fits_in_memory", w.fits_in_memory},
          {"cold_reads",
           {{"source", timing(w.reads.source)},
            {"local", timing(w.reads.local)},
            {"local_dir", w.reads.local_dir},
            {"vanished", w.reads.vanished}}}};
}

}  // namespace sat::probe
