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
  if (!journal.ok()) return journal.error();
  auto sweep = journal.value()->Sweep();
  if (!sweep.ok()) return sweep.error();
  if (!sweep.value()) return UsageError(fmt::format("journal {} holds no sweep yet", path));
  auto counts = journal.value()->Counts();
  if (!counts.ok()) return counts.error();
  auto runs = journal.value()->Runs();
  if (!runs.ok()) return runs.error();
  SweepStatus status;
  status.journal_path = path;
  status.sweep = *sweep.value();
  status.counts = counts.value();
  status.runs = SortByMetric(std::move(runs.value()), status.sweep.metric);
  if (Status verified = journal.value()->Verify(); !verified.ok()) status.problems = verified.message();
  return status;
}

}  // namespace sat::sweep
