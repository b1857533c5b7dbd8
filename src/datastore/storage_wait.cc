#include "datastore/storage_wait.h"

#include <fmt/core.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "util/sqlite.h"
#include "util/strings.h"

namespace sat::datastore {
namespace {

// A local copy saves the source's read overhead, never more than this much of the loader's CPU.
constexpr double kLeastCpuKept = 0.2;

double Clamp01(double x) { return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0; }

// Seconds a cold read of one file kept the reader off the CPU; nullopt without timed reads.
std::optional<double> OffCpuPerFile(const ColdReadTiming& t) {
  if (t.files == 0 || !(t.seconds > 0)) return std::nullopt;
  return std::max(0.0, t.seconds - t.cpu_seconds) / static_cast<double>(t.files);
}

// The share of the data's reads that reached the mount rather than the page cache (see the file comment).
double Uncached(const StorageEvidence& e) {
  if (e.cached_share) return 1 - Clamp01(*e.cached_share);
  if (e.mount == MountKind::kFuse || e.mount == MountKind::kNetwork) return 1;
  const LoaderActivity& a = e.loader;
  if (a.read_per_s && a.storage_read_per_s && *a.read_per_s > 0) return Clamp01(*a.storage_read_per_s / *a.read_per_s);
  return 0;
}

bool RoundTripMount(MountKind m) { return m == MountKind::kFuse || m == MountKind::kNetwork; }

std::optional<LoaderTimeSplit> Split(const StorageEvidence& e) {
  const LoaderActivity& a = e.loader;
  if (!a.cpu_cores || !(a.processes > 0)) return std::nullopt;
  const bool rated = a.samples_per_s > 0;
  // Without any evidence of fetching (process states, cold reads, a mount that makes every read a round trip) the
  // split would call every wait "other": there is none.
  if (!a.blocked && !(e.cold && rated) && !RoundTripMount(e.mount)) return std::nullopt;
  LoaderTimeSplit s;
  if (rated) {
    s.cpu_s_per_sample = *a.cpu_cores / a.samples_per_s;
    if (a.read_per_s) s.bytes_per_sample = *a.read_per_s / a.samples_per_s;
  }
  // The loading processes' time, as a share of their wall time, and the most of it they were on the CPU.
  double frame = a.processes, cpu_bound = 0;
  std::optional<double> blocked;
  if (a.data_wait_share && a.in_trainer) {
    // The trainer loads for itself: its loading is the loop's data wait, of which its CPU covers at most all.
    const double wait = Clamp01(*a.data_wait_share);
    if (wait <= 0) return std::nullopt;
    frame = wait;
    cpu_bound = Clamp01(*a.cpu_cores / wait);
    if (a.blocked) blocked = std::min(Clamp01(*a.blocked), wait) / wait;
  } else {
    double cpu = *a.cpu_cores;
    // Training with workers: the trainer's own core, busy whenever it is not waiting, is not the workers' prep.
    if (a.data_wait_share) cpu -= 1 - Clamp01(*a.data_wait_share);
    cpu_bound = Clamp01(cpu / a.processes);
    if (a.blocked) blocked = Clamp01(*a.blocked / a.processes);
  }
  const double off_cpu = 1 - cpu_bound;

  std::optional<double> cold;
  if (e.cold && rated) {
    const double files = std::max(0.0, e.files_per_sample), per_s = Uncached(e) * a.samples_per_s / frame;
    if (std::optional<double> per_file = OffCpuPerFile(e.cold->source)) {
      s.read_s_per_sample = files * *per_file;
      cold = std::min(off_cpu, *s.read_s_per_sample * per_s);
      if (std::optional<double> local = OffCpuPerFile(e.cold->local)) {
        s.copy_saves = std::min(off_cpu, files * std::max(0.0, *per_file - *local) * per_s);
      }
    }
  }
  // The largest share any evidence shows; 'D' first on a tie, as the most direct.
  if (blocked && *blocked > s.fetch) {
    s.fetch = *blocked;
    s.basis = FetchBasis::kBlocked;
  }
  if (cold && *cold > s.fetch) {
    s.fetch = *cold;
    s.basis = FetchBasis::kColdReads;
  }
  // The mount's inference only where nothing measured the reads.
  if (!cold && (!blocked || *blocked < kFetchBoundShare) && RoundTripMount(e.mount) && off_cpu > s.fetch) {
    s.fetch = off_cpu;
    s.basis = FetchBasis::kOffCpuOnMount;
  }
  s.fetch = Clamp01(s.fetch);
  s.prep = std::min(cpu_bound, 1 - s.fetch);
  s.other = 1 - s.fetch - s.prep;
  if (s.other < 1e-9) s.other = 0;
  return s;
}

}  // namespace

std::string_view MountKindName(MountKind kind) {
  switch (kind) {
    case MountKind::kLocal: return "local";
    case MountKind::kFuse: return "FUSE";
    case MountKind::kNetwork: return "network";
    case MountKind::kUnknown: break;
  }
  return "unknown";
}

MountKind MountKindOfType(std::string_view fs_type, bool network) {
  if (network) return MountKind::kNetwork;
  if (fs_type.empty()) return MountKind::kUnknown;
  if (fs_type == "fuse" || fs_type == "fuseblk" || StartsWith(fs_type, "fuse.")) return MountKind::kFuse;
  return MountKind::kLocal;
}

namespace {

// statfs(2)'s f_type of `path`, as the kernel's *_MAGIC constants spell it; nullopt where statfs fails.
std::optional<unsigned long> FsMagicAt(const std::string& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<unsigned long>(fs.f_type) & 0xFFFFFFFFul;
}

}  // namespace

MountKind MountKindAt(const std::string& path) {
  const std::optional<unsigned long> magic = FsMagicAt(path);
  if (!magic) return MountKind::kUnknown;
  if (*magic == FUSE_SUPER_MAGIC) return MountKind::kFuse;
  // 9p is a virtual machine's share of its host's disk: local, as core::IsNetworkFs has it.
  if (*magic != V9FS_MAGIC && sqlite::IsNetworkFileSystem(static_cast<long>(*magic))) return MountKind::kNetwork;
  return MountKind::kLocal;
}

bool InMemoryAt(const std::string& path) {
  const std::optional<unsigned long> magic = FsMagicAt(path);
  return magic && (*magic == TMPFS_MAGIC || *magic == RAMFS_MAGIC);
}

std::string_view StorageFindingName(StorageFinding f) {
  switch (f) {
    case StorageFinding::kKeepsUp: return "keeps-up";
    case StorageFinding::kStorage: return "storage";
    case StorageFinding::kCpu: return "cpu";
    case StorageFinding::kElsewhere: return "elsewhere";
    case StorageFinding::kUnknown: break;
  }
  return "unknown";
}

StorageWait JudgeStorageWait(const StorageEvidence& e) {
  StorageWait w;
  w.mount = e.mount;
  w.split = Split(e);
  if (e.cold && e.cold->local.files > 0 && e.cold->source.seconds > 0) w.copy_time_ratio = e.cold->LocalTimeRatio();
  if (e.loader.data_wait_share && Clamp01(*e.loader.data_wait_share) < kLoopWaitShare) {
    w.finding = StorageFinding::kKeepsUp;
    return w;
  }
  if (!w.split) return w;
  const LoaderTimeSplit& s = *w.split;
  if (s.fetch >= kFetchBoundShare && s.fetch > s.prep) {
    w.finding = StorageFinding::kStorage;
    w.copy_helps = w.copy_time_ratio ? *w.copy_time_ratio <= kCopyFasterRatio &&
                                           (!s.copy_saves || *s.copy_saves >= kCopySavesShare)
                                     : RoundTripMount(e.mount);
    // Each reader is mostly off the CPU (fetch > prep): more of them would overlap the waits, where cores are left.
    const double readers = std::max(1.0, e.loader.processes);
    w.more_readers_help = e.cores == 0 || readers < e.cores;
  } else if (s.prep >= kPrepBoundShare || (s.prep >= s.fetch && s.prep >= s.other)) {
    w.finding = StorageFinding::kCpu;
  } else {
    w.finding = StorageFinding::kElsewhere;
  }
  return w;
}

std::string FetchBasisText(const LoaderTimeSplit& s) {
  switch (s.basis) {
    case FetchBasis::kBlocked: return "processes in state D";
    case FetchBasis::kColdReads:
      return s.read_s_per_sample
                 ? fmt::format("cold reads of its files: {:.1f} ms a sample", *s.read_s_per_sample * 1000)
                 : std::string("cold reads of its files");
    case FetchBasis::kOffCpuOnMount: return "time off the CPU on a network or FUSE mount";
    case FetchBasis::kNone: break;
  }
  return "";
}

std::string SplitClause(const LoaderTimeSplit& s) {
  const std::string basis = FetchBasisText(s);
  return fmt::format("fetch {}{}, prep {} (its CPU), other {}", FormatShare(s.fetch),
                     basis.empty() ? "" : " (" + basis + ")", FormatShare(s.prep), FormatShare(s.other));
}

std::string FindingText(const StorageWait& w) {
  switch (w.finding) {
    case StorageFinding::kStorage:
      if (w.copy_helps) {
        return w.copy_time_ratio && *w.copy_time_ratio > 0
                   ? fmt::format("its loader waits on storage, and a local copy reads {} faster",
                                 FormatTimes(1 / *w.copy_time_ratio))
                   : std::string("its loader waits on storage");
      }
      if (w.copy_time_ratio && *w.copy_time_ratio <= kCopyFasterRatio && w.split->copy_saves) {
        return fmt::format("its loader waits on storage, but a local copy's faster reads would save only {} of its "
                           "time: a copy would not help",
                           FormatShare(*w.split->copy_saves));
      }
      if (w.copy_time_ratio) {
        return fmt::format("its loader waits on storage, and a local copy read as slowly ({} of the time): a faster "
                           "drive would help, a copy would not",
                           FormatShare(*w.copy_time_ratio));
      }
      if (w.mount == MountKind::kLocal) return "its loader waits on storage, a local drive: a faster drive would help";
      return "its loader waits on storage";
    case StorageFinding::kCpu: return "its loader computes (decoding, transforms): a copy would not help";
    case StorageFinding::kElsewhere:
      return "its loader waits, but neither on its CPU nor on storage (a lock, a queue, a slow producer): a copy "
             "would not help";
    case StorageFinding::kKeepsUp: return "its loader keeps up";
    case StorageFinding::kUnknown: break;
  }
  return "its loader's CPU use is unknown";
}

std::optional<LocalCopyEstimate> EstimateLocalCopy(const LoaderActivity& loader, double local_time_ratio,
                                                   const ReadCpuPerSample& reads, unsigned cores) {
  if (!(loader.samples_per_s > 0) || !loader.cpu_cores || !(*loader.cpu_cores > 0)) return std::nullopt;
  const double rate = loader.samples_per_s, cpu = *loader.cpu_cores;
  const double processes = std::max(loader.processes, cpu);
  // Per sample the loaders spend processes / rate process-seconds, cpu / rate of them on the CPU.
  const double cpu_s = cpu / rate, off_s = (processes - cpu) / rate;
  double cpu_local_s = cpu_s;
  if (loader.sys_cores && std::isfinite(*loader.sys_cores)) {
    // The kernel's part goes as the reads' CPU does: a loader's kernel time on a FUSE or network mount is mostly its
    // reads (measured: 0.5-1.4 ms a read in a torch loader on slowfs, against 0.3 ms read alone and cold).
    const double sys_s = std::clamp(*loader.sys_cores, 0.0, cpu) / rate;
    const double ratio = reads.source_s > 0 ? reads.local_s / reads.source_s : 1.0;
    const double kept = std::isfinite(ratio) ? std::clamp(ratio, 0.0, 1.0) : 0.0;
    cpu_local_s = cpu_s - sys_s + sys_s * kept;
  } else {
    const double saved = reads.source_s - reads.local_s;
    if (std::isfinite(saved)) cpu_local_s -= std::max(0.0, saved);
  }
  cpu_local_s = std::max(kLeastCpuKept * cpu_s, cpu_local_s);
  const double ratio = std::isfinite(local_time_ratio) ? std::max(0.0, local_time_ratio) : 1.0;
  // At most one core per loading process, and no more than the machine has.
  double busy = processes;
  if (cores > 0) busy = std::min(busy, static_cast<double>(cores));
  LocalCopyEstimate est;
  est.warm_samples_per_s = busy / cpu_local_s;
  est.cold_samples_per_s = std::min(est.warm_samples_per_s, processes / (cpu_local_s + off_s * ratio));
  return est;
}

std::optional<LocalCopyEstimate> EstimateLocalCopy(const StorageEvidence& e) {
  if (!e.cold || e.cold->local.files == 0) return std::nullopt;
  auto per_sample = [&](const ColdReadTiming& t) {
    return t.files > 0 ? e.files_per_sample * t.cpu_seconds / static_cast<double>(t.files) : 0.0;
  };
  return EstimateLocalCopy(e.loader, e.cold->LocalTimeRatio(),
                           ReadCpuPerSample{per_sample(e.cold->source), per_sample(e.cold->local)}, e.cores);
}

std::optional<double> TrainingOnCopyEstimate(const StorageEvidence& e, const StorageWait& w) {
  const LoaderActivity& a = e.loader;
  if (!(a.samples_per_s > 0) || !a.data_wait_share || !w.split || !w.copy_time_ratio) return std::nullopt;
  const double saved = Clamp01(*a.data_wait_share) * w.split->fetch * (1 - Clamp01(*w.copy_time_ratio));
  return a.samples_per_s / std::max(1e-3, 1 - saved);
}

std::optional<double> MoreReadersEstimate(const LoaderActivity& loader, double readers, unsigned cores) {
  if (!(loader.samples_per_s > 0) || !loader.cpu_cores || !(*loader.cpu_cores > 0) || !(readers > 0)) {
    return std::nullopt;
  }
  const double now = std::max(1.0, loader.processes);
  const double cpu_s = *loader.cpu_cores / loader.samples_per_s;
  double busy = readers;
  if (cores > 0) busy = std::min(busy, static_cast<double>(cores));
  return std::min(loader.samples_per_s * readers / now, busy / cpu_s);
}

}  // namespace sat::datastore
