#include "sweep/status.h"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include <fstream>

#include "sweep/export.h"
#include "sweep/sweep_journal.h"

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
  if (std::ifstream in(LogDirFor(path) + "/clock.json"); in) {
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_object() && j.contains("shapes") && j["shapes"].is_object()) {
      for (const auto& [shape, why] : j["shapes"].items())
        if (why.is_string()) status.clocked[shape] = why.get<std::string>();
      status.clocked_packed = j.value("pack", false);
    }
  }
  return status;
}

std::string ClockedText(const std::map<std::string, std::string>& clocked, bool packed) {
  std::string out;
  for (const auto& [shape, why] : clocked)
    out += fmt::format("{}runs stop on the clock ({}): {}\n", shape.empty() ? "" : shape + ": ", why,
                       packed ? "packed anyway (time_budget_runs: pack), so each trains less than it would alone"
                              : "one per device, so each trains as long as it would alone");
  return out;
}

}  // namespace sat::sweep
