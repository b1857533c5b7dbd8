// One attempt of a sweep run on a compute node by a backend's wrapper (Slurm's `saturate sweep run-one JOB.json`,
// slurm/node_wrapper.h; a Kubernetes pod's would be the same): the attempt in, what happened out, as files in the
// attempt's folder, which must be on a filesystem the submitting machine and the nodes share. It runs the command
// under saturate's runner (src/run), measures it as a local sweep does (helper channel or automatic
// instrumentation for throughput; the process tree's CPU and RSS; GPU memory per process through the GPU backend
// when the node has one), and writes each file to a temporary name and renames it, so the submitting side never
// reads half a file:
//   job.json        the attempt (NodeJob), written by the submitter
//   started.json    {attempt_id, job_id, node, started_unix}: the job reached the sweep folder
//   footprint.json  once the run is measured (steady): its usage, so the submitter can size the shape's other
//                   runs before this one ends
//   outcome.json    at the end: NodeOutcome
// SQLite is never opened here: the journal stays on the submitting machine. The backend says only who runs the
// attempt (NodeIdentity: its job id and node name) and what its request is (NodeJob::request).
//
// SIGTERM (a cancel, a time limit, a preemption) stops the run through the runner's ladder; the outcome then says
// `signalled`, and the submitter asks its scheduler why the job ended.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run/exit_class.h"
#include "sweep/records.h"
#include "sweep/spec.h"
#include "telemetry/gpu.h"
#include "util/result.h"

namespace sat::sweep {

// What the submitter tells the wrapper (job.json in the attempt's folder).
struct NodeJob {
  int64_t attempt_id = 0;
  std::string run_key;
  int attempt_no = 0;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string log_dir;  // the attempt's folder: logs, and the files above
  std::string metric_pattern;
  std::optional<MetricSpec> metric;
  bool auto_instrumentation = true;
  double time_limit_s = 0;
  double warmup_s = 1, window_s = 1;
  // The backend's request for the job, as the backend wrote it (Slurm: slurm/right_size.h SlurmRequest). The
  // wrapper reads two members of it: `gpus`, the whole GPUs it holds (the run is alone on them, so their
  // utilisation is its own), and `gpu_fraction`, the share of one GPU it holds (1 per whole GPU, less for a shard
  // or an MPS share; 0 without a GPU), which its GPUs' energy is charged by.
  nlohmann::json request = nlohmann::json::object();
  // Data to stage on the node before the run starts (sweep/staging.h StageOnNode); no paths: none.
  StagingOptions stage;
};
nlohmann::json NodeJobToJson(const NodeJob& job);
Result<NodeJob> NodeJobFromJson(const nlohmann::json& j);

// What one attempt on a node came to (outcome.json), or what it used so far (footprint.json: no exit fields).
struct NodeOutcome {
  int64_t attempt_id = 0;
  std::string job_id, node;
  run::ExitClass exit_class = run::ExitClass::kFailed;
  int exit_code = -1, term_signal = 0;
  std::string detail, error_line;
  double duration_s = 0;
  bool signalled = false;  // the wrapper itself got SIGTERM/SIGINT (the scheduler ended the job)
  // The run could not start for a reason of this node's, not the command's (its staging failed): retried within
  // the retry budget as a transient start failure.
  bool start_transient = false;
  Measurements measurements;
  std::optional<uint64_t> gpu_total_bytes;  // memory of the GPU the run used
  // The GPU's mean utilisation while the run trained alone on it (a whole-GPU request); unset otherwise.
  std::optional<double> gpu_util_pct;
  std::vector<MetricPoint> metrics;
};
nlohmann::json NodeOutcomeToJson(const NodeOutcome& outcome);
Result<NodeOutcome> NodeOutcomeFromJson(const nlohmann::json& j);

// The file names inside an attempt's folder.
inline constexpr const char* kJobFile = "job.json";
inline constexpr const char* kStartedFile = "started.json";
inline constexpr const char* kFootprintFile = "footprint.json";
inline constexpr const char* kOutcomeFile = "outcome.json";

// Reads a JSON file; nullopt when it does not exist, an error when it cannot be read or parsed.
Result<std::optional<nlohmann::json>> ReadJsonFile(const std::string& path);

// Who runs the attempt, as its backend names it: in started.json, footprint.json and outcome.json.
struct NodeIdentity {
  std::string job_id;  // the scheduler's job (Slurm: "<array job>_<task>")
  std::string node;    // the node as the scheduler names it
};

struct NodeOptions {
  telemetry::GpuBackend* gpu = nullptr;  // not owned; null: no GPU readings
  double tick_s = 0.5;
};

// Runs the job described by the file at `job_path` and writes its files. Returns the exit code the wrapper
// should exit with: 0 when the run finished, 1 when it did not (the outcome says why). Error when the job file
// cannot be read or the outcome cannot be written (the sweep folder is not visible or writable here).
Result<int> RunNodeAttempt(const std::string& job_path, const NodeIdentity& who, const NodeOptions& options);

}  // namespace sat::sweep
