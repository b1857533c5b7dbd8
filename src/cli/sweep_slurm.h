// The Slurm side of `saturate sweep` (slurm/slurm_backend.h): its options from the command line, the question
// asked on Ctrl-C, the asked-vs-used report, and `sweep run-one`, the wrapper a Slurm job runs on its node.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sweep/backend.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::cli {

// Runs the sweep on Slurm with the local sweep's journal, log folder, seed, warm-up and window, and events.
// `cancel`: on Ctrl-C cancel the jobs in flight without asking; otherwise a terminal is asked, and elsewhere
// the jobs are left to Slurm.
Result<sweep::SweepResult> RunSweepOnSlurm(const sweep::Spec& spec, const sweep::SweepOptions& o, bool cancel);

// The asked-vs-used report of the journal's Slurm attempts, as text (empty) and JSON (null) when it has none; with
// a price per GPU-hour, its GPU-hours in money too.
Result<std::string> SlurmReportText(const std::string& journal_path, bool all, std::optional<double> price);
Result<nlohmann::json> SlurmReportJsonOf(const std::string& journal_path, std::optional<double> price);

// `saturate sweep run-one JOB.json`: runs one attempt on a compute node (slurm/node_wrapper.h).
Status RunOneCommand(const std::string& job_file);

}  // namespace sat::cli
