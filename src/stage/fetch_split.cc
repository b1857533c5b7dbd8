#include "stage/fetch_split.h"

#include <algorithm>
#include <cmath>

namespace sat::stage {
namespace {

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

}  // namespace sat::stage
