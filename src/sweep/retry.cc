#include "sweep/retry.h"

#include <fmt/format.h>

#include "util/strings.h"

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
  return line.empty() ? LastNonBlank(stdout_tail) : line;
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

}  // namespace sat::sweep
