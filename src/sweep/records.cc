#include "sweep/records.h"

#include <chrono>

namespace sat::sweep {

double NowUnix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::optional<double> JoulesPerSample(const Measurements& m) {
  if (!m.energy_j || !m.samples || !(*m.samples > 0)) return std::nullopt;
  return *m.energy_j / *m.samples;
}

std::string_view RunStateName(RunState s) {
  switch (s) {
    case RunState::kQueued: return "queued";
    case RunState::kRunning: return "running";
    case RunState::kDone: return "done";
    case RunState::kFailed: return "failed";
    case RunState::kRetrying: return "retrying";
  }
  return "?";
}

}  // namespace sat::sweep
