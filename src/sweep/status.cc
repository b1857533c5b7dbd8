#include "sweep/status.h"

#include <fmt/format.h>

#include <filesystem>

#include "sweep/export.h"

namespace sat::sweep {

Result<SweepStatus> ReadStatus(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return UsageError(
        fmt::format("no sweep journal at {} (give --journal PATH, or the spec the sweep ran from)", path));
  }
  auto journal = Journal::Open(path);
  if (!journal) return journal.error();
  auto sweep = (*journal)->Sweep();
  if (!sweep) return sweep.error();
  if (!*sweep) return UsageError(fmt::format("journal {} holds no sweep yet", path));
  auto counts = (*journal)->Counts();
  if (!counts) return counts.error();
  auto runs = (*journal)->Runs();
  if (!runs) return runs.error();
  SweepStatus status;
  status.journal_path = path;
  status.sweep = **sweep;
  status.counts = *counts;
  status.runs = SortByMetric(std::move(*runs), status.sweep.metric);
  if (Status verified = (*journal)->Verify(); !verified) status.problems = verified.message();
  return status;
}

}  // namespace sat::sweep
