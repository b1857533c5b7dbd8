#include "sweep/status.h"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include <fstream>

#include "sweep/controller.h"
#include "sweep/export.h"

namespace sat::sweep {

Result<SweepStatus> ReadStatus(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return UsageError(
        fmt::format("no sweep journal at {} (give --journal PATH, or the spec the sweep ran from)", path));
  }
  auto journal = Journal::OpenReadOnly(path);
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
  std::vector<RunRecord> records = std::move(*runs);
  std::vector<AttemptRecord> attempts;
  for (const RunRecord& r : records) {
    auto of_run = (*journal)->Attempts(r.key);
    if (!of_run) return of_run.error();
    attempts.insert(attempts.end(), of_run->begin(), of_run->end());
  }
  status.gpu_hours = GpuHoursOf(attempts, static_cast<double>(std::time(nullptr)));
  status.energy = EnergyOf(attempts);
  status.runs = SortByMetric(std::move(records), status.sweep.metric);
  if (Status verified = (*journal)->Verify(); !verified) status.problems = verified.message();
  // A staging account cut short or edited is left out: it describes the data, not the runs.
  if (std::ifstream in(LogDirFor(path) + "/staging.json"); in) {
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded()) status.staging = StagingFromJson(j);
  }
  return status;
}

}  // namespace sat::sweep
