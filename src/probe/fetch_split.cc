#include "probe/fetch_split.h"

#include <algorithm>
#include <cmath>

namespace sat::probe {
namespace {

// A local copy saves the source's read overhead, never more than this much of the loader's CPU.
constexpr double kLeastCpuKept = 0.2;

double Clamp01(double x) { return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0; }

}  // namespace

std::optional<LoaderTimeSplit> SplitLoaderTime(const LoaderActivity& a) {
  if (!(a.samples_per_s > 0) || !a.cpu_cores || !a.blocked || !(a.processes > 0)) return std::nullopt;
  const double processes = a.processes;
  LoaderTimeSplit s;
  s.cpu_s_per_sample = *a.cpu_cores / a.samples_per_s;
  if (a.read_per_s) s.bytes_per_sample = *a.read_per_s / a.samples_per_s;

  if (a.data_wait_share && processes <= 1) {
    // The trainer loads for itself: its loading is the loop's data wait, blocked or on the CPU.
    const double wait = Clamp01(*a.data_wait_share);
    if (wait <= 0) return std::nullopt;
    const double blocked = std::min(Clamp01(*a.blocked), wait);
    s.fetch = blocked / wait;
    s.prep = 1 - s.fetch;
    return s;
  }
  double cpu = *a.cpu_cores;
  // Full stage with workers: the trainer's own core, busy whenever it is not waiting, is not the workers' prep.
  if (a.data_wait_share) cpu -= 1 - Clamp01(*a.data_wait_share);
  s.prep = Clamp01(cpu / processes);
  s.fetch = std::min(Clamp01(*a.blocked / processes), 1 - s.prep);
  s.other = std::max(0.0, 1 - s.prep - s.fetch);
  return s;
}

bool FetchBound(const LoaderTimeSplit& s) { return s.fetch >= kFetchBoundShare && s.fetch > s.prep; }

std::optional<LocalCopyEstimate> EstimateLocalCopy(const LoaderActivity& loader, double local_time_ratio,
                                                   double cpu_saved_s_per_sample, unsigned cores) {
  if (!(loader.samples_per_s > 0) || !loader.cpu_cores || !(*loader.cpu_cores > 0)) return std::nullopt;
  const double rate = loader.samples_per_s, cpu = *loader.cpu_cores;
  const double processes = std::max(loader.processes, cpu);
  // Per sample the loaders spend processes / rate process-seconds, cpu / rate of them on the CPU.
  const double cpu_s = cpu / rate, off_s = (processes - cpu) / rate;
  const double saved = std::isfinite(cpu_saved_s_per_sample) ? std::max(0.0, cpu_saved_s_per_sample) : 0.0;
  const double cpu_local_s = std::max(kLeastCpuKept * cpu_s, cpu_s - saved);
  const double ratio = std::isfinite(local_time_ratio) ? std::max(0.0, local_time_ratio) : 1.0;
  // At most one core per loading process, and no more than the machine has.
  double busy = processes;
  if (cores > 0) busy = std::min(busy, static_cast<double>(cores));
  LocalCopyEstimate e;
  e.warm_samples_per_s = busy / cpu_local_s;
  e.cold_samples_per_s = std::min(e.warm_samples_per_s, processes / (cpu_local_s + off_s * ratio));
  return e;
}

}  // namespace sat::probe
