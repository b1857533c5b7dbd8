// What `saturate sweep status` and `saturate sweep export` read: a journal's sweep, counts and runs, and whether
// it is consistent. Safe while a sweep is running (the journal is in WAL mode; this is one more reader), and it
// never writes: the journal is opened read-only and an older schema is read as it is (Journal::OpenReadOnly).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sweep/cost.h"
#include "sweep/staging.h"
#include "sweep/journal.h"
#include "util/result.h"

namespace sat::sweep {

struct SweepStatus {
  std::string journal_path;
  SweepInfo sweep;
  StateCounts counts;
  std::vector<RunRecord> runs;  // best first by the sweep's metric (SortByMetric)
  std::string problems;         // Journal::Verify's findings; empty when consistent
  GpuHours gpu_hours;           // over every attempt so far, running ones up to now (sweep/cost.h)
  SweepEnergy energy;           // over the ended attempts (sweep/cost.h)
  // What the sweep staged, from <logs>/staging.json (the controller writes it); nullopt when it staged nothing.
  std::optional<StagingReport> staging;
  // Shapes whose runs were found to stop on the clock, and why, from <logs>/clock.json (sweep/clock_runs.h).
  std::map<std::string, std::string> clocked;
  bool clocked_packed = false;  // the spec packs them anyway (time_budget_runs: pack)
};

// One line per shape on the clock: "runs stop on the clock (4 runs ended after 8.0-8.1 s of training while they
// trained 560 to 940 samples): one per device, so each trains as long as it would alone"; "" for none.
std::string ClockedText(const std::map<std::string, std::string>& clocked, bool packed);

// Reads the journal at `path`. Usage error when there is no such file or it holds no sweep (it is never
// created here).
Result<SweepStatus> ReadStatus(const std::string& path);

}  // namespace sat::sweep
