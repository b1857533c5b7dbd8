#include "sweep/retry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/strings.h"
#include "util/utf8.h"

namespace sat::sweep {
namespace {

std::string LastNonBlank(const std::vector<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::string_view line = Trim(*it);
    if (!line.empty()) return std::string(line);
  }
  return "";
}

}  // namespace

std::string LastErrorLine(const std::vector<std::string>& stderr_tail, const std::vector<std::string>& stdout_tail) {
  std::string line = LastNonBlank(stderr_tail);
  // Control bytes made visible: the line is shown on terminals (the live view, `sweep status`) and in the journal.
  return VisibleText(line.empty() ? LastNonBlank(stdout_tail) : line);
}

bool RepeatableFailure(const FailureFacts& f) {
  const bool plain = f.exit_class == run::ExitClassName(run::ExitClass::kFailed);
  const bool oom = f.exit_class == run::ExitClassName(run::ExitClass::kGpuOom) ||
                   f.exit_class == run::ExitClassName(run::ExitClass::kHostOom);
  return (plain || (oom && !f.oom_while_packed)) && f.term_signal == 0 && !f.error_line.empty();
}

std::optional<std::string> SameFailureAgain(const FailureFacts& previous, int previous_no, const FailureFacts& latest) {
  if (!RepeatableFailure(previous) || !RepeatableFailure(latest)) return std::nullopt;
  if (previous.exit_class != latest.exit_class || previous.error_line != latest.error_line) return std::nullopt;
  return fmt::format("the same error as attempt {} ({}: {}): not retried", previous_no, latest.exit_class,
                     latest.error_line);
}

bool CountsAsFailure(run::ExitClass c) { return c != run::ExitClass::kFinished && c != run::ExitClass::kStopped; }

namespace {
bool OomWhilePacked(const AttemptOutcome& o) {
  return o.oom_while_packed && (o.exit_class == run::ExitClass::kGpuOom || o.exit_class == run::ExitClass::kHostOom);
}

bool TransientStart(const AttemptOutcome& o) {
  return o.exit_class == run::ExitClass::kStartFailed && o.start_transient;
}

}  // namespace

bool CountsAsFailure(const AttemptOutcome& outcome) {
  return !outcome.stopped_early && !OomWhilePacked(outcome) && !TransientStart(outcome) &&
         CountsAsFailure(outcome.exit_class);
}

RunState StateAfterOutcome(const AttemptOutcome& outcome, int failures_before, const RetryPolicy& policy,
                           int transient_before) {
  if (outcome.stopped_early) return RunState::kDone;
  if (OomWhilePacked(outcome)) return RunState::kQueued;
  if (TransientStart(outcome)) {
    return transient_before + 1 <= policy.transient_starts ? RunState::kRetrying : RunState::kFailed;
  }
  return StateAfterAttempt(outcome.exit_class, failures_before, policy);
}

double TransientStartDelay(int n, double jitter) {
  const double base = std::min(10.0, 0.25 * std::pow(2.0, std::clamp(n, 1, 16) - 1));
  return base * std::clamp(jitter, 0.5, 1.5);
}

RunState StateAfterAttempt(run::ExitClass c, int failures_before, const RetryPolicy& policy) {
  switch (c) {
    case run::ExitClass::kFinished: return RunState::kDone;
    case run::ExitClass::kStopped: return RunState::kQueued;
    // A command that cannot start fails the same way every time; a timeout depends on the machine and keeps
    // its retries.
    case run::ExitClass::kStartFailed: return RunState::kFailed;
    default: return failures_before + 1 <= policy.retries ? RunState::kRetrying : RunState::kFailed;
  }
}

}  // namespace sat::sweep
