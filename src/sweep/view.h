// Presentation of a sweep for the CLI: the live view, event lines, the results table and status document.
// Pure functions of their arguments; nothing here prints.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/backend.h"
#include "sweep/records.h"
#include "sweep/status.h"

namespace sat::sweep {

// The live block, redrawn about once a second: counts, then per device its load and the runs packed there
// with their throughput (or CPU use) and memory. Lines are cut to `width` characters.
std::vector<std::string> LiveLines(const SweepSnapshot& snapshot, size_t width);

// One line per event: "[  12.3s] #3 1f2e3d4c5b6a on cpu: finished in 9.8 s".
std::string EventLine(const SweepEvent& event);

// "8 runs: 0 queued, 0 running, 7 done, 1 failed, 0 retrying".
std::string CountsLine(const StateCounts& counts);

// The results, in the given order (best first): rank, index, key, state, attempts, the sweep metric, each
// parameter, throughput, peak memory, CPU. At most `max_rows` rows (0: all), then a line saying how many more.
std::string ResultsTable(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric, size_t max_rows);

// `saturate sweep status`: the journal, the counts, a consistency line when something is wrong, the table.
std::string FormatStatus(const SweepStatus& status, size_t max_rows);

// {"journal", "spec", "spec_hash", "seed", "metric": {name, goal} | null, "counts": {queued, running, done,
//  failed, retrying, total}, "consistent", "problems": string | null, "runs": ResultsJson's runs}.
nlohmann::json StatusJson(const SweepStatus& status);

}  // namespace sat::sweep
