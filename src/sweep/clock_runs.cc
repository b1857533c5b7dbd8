#include "sweep/clock_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sat::sweep {

std::optional<ClockJudgement> JudgeClock(const std::vector<EndedRun>& runs, const std::string& unit) {
  std::vector<EndedRun> usable;
  for (const EndedRun& r : runs)
    if (std::isfinite(r.duration_s) && std::isfinite(r.trained) && r.duration_s > 0 && r.trained > 0)
      usable.push_back(r);
  if (usable.size() < 2) return std::nullopt;
  const auto [short_run, long_run] = std::minmax_element(
      usable.begin(), usable.end(), [](const EndedRun& a, const EndedRun& b) { return a.duration_s < b.duration_s; });
  const auto [least, most] = std::minmax_element(
      usable.begin(), usable.end(), [](const EndedRun& a, const EndedRun& b) { return a.trained < b.trained; });
  const double time_ratio = long_run->duration_s / short_run->duration_s;
  const double work_ratio = most->trained / least->trained;
  const std::string text =
      fmt::format("{} runs ended after {:.1f}-{:.1f} s of training while they trained {:.0f} to {:.0f} {}",
                  usable.size(), short_run->duration_s, long_run->duration_s, least->trained, most->trained, unit);
  if (work_ratio >= kClockSpread && time_ratio <= kClockSameTime) return ClockJudgement{true, text};
  if (work_ratio <= kClockSameWork) return ClockJudgement{false, text};
  return std::nullopt;
}

}  // namespace sat::sweep
