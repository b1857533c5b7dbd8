// A sweep's results as files: runs best first by the sweep's metric, as CSV and as JSON (`saturate sweep export`,
// and the files a finished sweep writes). Pure functions of the records.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/records.h"
#include "sweep/spec.h"

namespace sat::sweep {

// Results for a report, best first: runs with the metric ordered by it (by `metric`'s goal, ties by index),
// then the rest by index. Without a metric, by index.
std::vector<RunRecord> SortByMetric(std::vector<RunRecord> runs, const std::optional<MetricSpec>& metric);

// One row per run, in the given order: rank, key, index, state, attempts, the sweep metric, param.NAME per
// parameter, metric.NAME per other metric, the measurements, gpu, started_unix, finished_unix. RFC 4180
// quoting; empty cells for missing values; parameter values as the command line gets them (PyStr).
std::string ResultsCsv(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric);

// {"metric": {"name", "goal"} | null, "runs": [{"rank", "key", "index", "state", "stopped_early", "attempts",
//  "failures", "params", "metrics", "throughput_samples_per_s", "peak_gpu_memory_bytes", "cpu_pct", "rss_bytes", "gpu",
//  "started_unix", "finished_unix"}]}, nulls for missing values.
nlohmann::json ResultsJson(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric);

}  // namespace sat::sweep
