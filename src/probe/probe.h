// `saturate probe`: loader-only, compute-only and full measurements of a training command, and the verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/data_location.h"
#include "probe/stage.h"
#include "probe/verdict.h"
#include "telemetry/gpu.h"

namespace sat::probe {

struct MachineInfo {
  unsigned cpu_count = 0;
  std::optional<uint64_t> mem_total_bytes;
  std::string gpu_name;                      // empty without a GPU
  std::optional<uint64_t> gpu_mem_total_bytes;
  int gpu_index = -1;                        // -1: no GPU probed
};

struct ProbeResult {
  std::vector<std::string> command;
  MachineInfo machine;
  double budget_s = 0, wall_s = 0;
  bool helper = false;                       // the script reports through `import saturate`
  bool interrupted = false;                  // Ctrl-C: the stages measured so far are kept
  StageResult loader, compute, full;         // a stage that did not run has ran == false
  std::vector<DataLocation> data_locations;  // where the files the run read live
  Verdict verdict;
};

struct ProbeOptions {
  std::vector<std::string> argv;
  bool shell = false;
  double budget_s = 120;
  int gpu_index = -1;                        // --device N; -1: the first GPU when there is one
  std::optional<std::string> parse;
  std::optional<double> batch_size;
  std::string out_dir;                       // --out: probe.json and the stages' logs; empty: a temp dir
  bool verbose = false;
  double target_rel_half_width = 0.02;
  std::string proc_root = "/proc";
};

}  // namespace sat::probe

namespace sat::probe {

// Runs the stages in order (full first, which tells whether the script uses the helper; then loader and compute
// when it does), within the budget, and decides the verdict. `gpu` is not owned and may be null (no driver).
// Ctrl-C ends the stage under way; the result keeps what was measured and says interrupted.
// Error only for saturate's own problems (bad --parse, cannot create --out); a failing command is a verdict.
Result<ProbeResult> RunProbe(const ProbeOptions& options, telemetry::GpuBackend* gpu);

// Writes probe.json into `dir` (created).
Status WriteProbeJson(const ProbeResult& result, const std::string& dir);

}  // namespace sat::probe
