// Runs that stop on the clock: some sweeps give every run a fixed wall-clock budget (train for five minutes, then
// evaluate). Packed, such runs end no later, but each trains less in that time: every result gets worse. They show
// it in what they leave behind: their durations agree while what they trained does not (a run that shared its
// device trained less), where runs of a fixed amount of work train the same and take longer when they share.
// Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sat::sweep {

// One run that ended on its own: its training time (from its first step, else from its start, to its end) in
// seconds, and the samples (else steps) it counted.
struct EndedRun {
  double duration_s = 0;
  double trained = 0;
};

struct ClockJudgement {
  bool on_clock = false;
  std::string why;  // "4 runs each ended after 8.0-8.2 s of training while they trained 610 to 940 samples"
};

// Judges the runs of one shape: on the clock when the most trained run trained at least kClockSpread times the
// least while the longest took at most kClockSameTime times the shortest; a fixed amount of work when they all
// trained within kClockSameWork of each other. nullopt: too few runs (2), or nothing that tells.
inline constexpr double kClockSpread = 1.10, kClockSameTime = 1.04, kClockSameWork = 1.03;
std::optional<ClockJudgement> JudgeClock(const std::vector<EndedRun>& runs, const std::string& unit = "samples");

}  // namespace sat::sweep
