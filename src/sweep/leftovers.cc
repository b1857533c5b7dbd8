#include "sweep/leftovers.h"

#include <fmt/format.h>

namespace sat::sweep {

std::string RunIdEntry(const AttemptRecord& attempt) {
  return fmt::format("SATURATE_RUN_ID={}-{}-{}", attempt.owner_pid, attempt.run_key, attempt.attempt_no);
}

}  // namespace sat::sweep
