// What a Slurm sweep's runs asked Slurm for against what they used, and the GPU-hours right-sizing saved against
// one whole GPU per run. Read from the journal (requests, measurements) and the attempts' outcome files (run
// durations); shown by `saturate sweep --slurm` at its end and by `saturate sweep status`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "slurm/right_size.h"
#include "sweep/records.h"
#include "util/result.h"

namespace sat::slurm {

struct SlurmRunUsage {
  std::string key;
  int64_t index = 0;
  std::string state;   // the run's
  std::string job_id;  // of its latest ended attempt
  SlurmRequest asked;
  sweep::Measurements used;        // the run's latest measurements
  double duration_s = 0;    // the latest attempt's run time on its node
};

struct SlurmReport {
  std::vector<SlurmRunUsage> runs;  // by index
  int sized = 0;                    // runs whose latest request came from measurement
  // GPU-hours held by the requests (whole GPUs, or the shard / MPS share of one) and with one GPU per run.
  double gpu_hours_asked = 0, gpu_hours_one_per_run = 0;
  double cpu_hours_asked = 0, cpu_hours_used = 0;  // runs with a CPU request and a measurement
};

// Pure: the report over runs and their latest ended Slurm attempt (parallel vectors; attempts without a Slurm
// job are left out), with each attempt's duration.
SlurmReport BuildSlurmReport(const std::vector<sweep::RunRecord>& runs,
                             const std::vector<sweep::AttemptRecord>& attempts, const std::vector<double>& durations_s);

// The node a Slurm attempt's job ran on, as its started.json (or outcome.json) in the attempt's folder says; "" when
// neither does (the job has not started, or the folder is gone). For the sweep report's lanes (sweep::NodeOf).
std::string AttemptNode(const sweep::AttemptRecord& attempt);

// Reads the journal at `path`; nullopt when no attempt of it went through Slurm.
Result<std::optional<SlurmReport>> ReadSlurmReport(const std::string& journal_path);

// "Slurm: asked vs used" table (at most `max_rows` runs; 0: all) and the GPU-hours line, with a price per GPU-hour
// also in money ("At 2.50 per GPU-hour: 3.13 asked, 5.00 with one GPU per run, 1.88 saved").
std::string FormatSlurmReport(const SlurmReport& report, size_t max_rows, std::optional<double> price_per_gpu_hour);
// With a price: price_per_gpu_hour, cost_asked, cost_one_per_run (null without one).
nlohmann::json SlurmReportJson(const SlurmReport& report, std::optional<double> price_per_gpu_hour);

}  // namespace sat::slurm
