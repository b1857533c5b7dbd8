// Where `saturate simulate`'s runs come from: a generator driven by a few numbers and a seed, or a JSON file.
//
// JSON schema (a top-level array of runs is accepted too):
//   {
//     "runs": [
//       {
//         "id": "resnet50-lr0.1",   // string; default "run-<index>"
//         "shape": "resnet50-bs256",// string; runs of one configuration share it; default: the id
//         "duration_s": 3600,       // number > 0, required: training time alone on a GPU
//         "mem_gib": 22.5,          // number > 0, required: steady GPU memory
//         "peak_gib": 24.0,         // number >= mem_gib; default mem_gib
//         "gpu_util": 0.85,         // number in (0, 1], required: solo GPU utilisation
//         "cpu_cores": 6,           // number >= 0; default 1
//         "startup_s": 30,          // number >= 0; default 30
//         "warmup_s": 60,           // number >= 0; default 60
//         "count": 8                // integer >= 1; default 1: that many runs, ids suffixed "#0".."#7"
//       }
//     ]
//   }
// Unknown fields are errors (with a "did you mean"), so a typo never silently takes a default.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model.h"
#include "util/result.h"

namespace sat::sim {

// A hyper-parameter sweep mix of small configurations (4-12% of GPU memory, 15-45% utilisation, 15-60 min,
// 2-4 cores, 15-45 s start-up, 60 s warm-up) and large ones (30-60% of GPU memory, 85-100% utilisation,
// 1-4 h, 6-10 cores, 30-90 s start-up, 120 s warm-up), each configuration drawn once. Each run draws its
// class (large with probability `large_fraction`), then a configuration of that class uniformly; runs of
// one configuration (one shape) differ by ±3% memory, a 0-6% higher peak and ±10% duration.
struct WorkloadSpec {
  int runs = 1000;               // >= 0
  double large_fraction = 0.25;  // in [0, 1]
  int small_configs = 4;         // >= 1
  int large_configs = 4;         // >= 1
  double gpu_mem_gib = 80;       // memory shares above are of this; > 0
  uint64_t seed = 1;
};

// Usage error when a field is out of range.
Status ValidateSpec(const WorkloadSpec& spec);

// Deterministic for a given spec on every platform (own random generator and distributions). `spec` must
// have passed ValidateSpec.
std::vector<SimRun> GenerateWorkload(const WorkloadSpec& spec);

// Parses the JSON schema above; errors name the run index and field. Runs are not checked against a
// cluster: call Validate for that.
Result<std::vector<SimRun>> ParseRuns(std::string_view json_text);
// Reads and parses a file; errors start with the path.
Result<std::vector<SimRun>> LoadRuns(const std::string& path);
// The runs in the JSON schema above (every field written, one entry per run), for editing and reloading.
std::string RunsToJson(const std::vector<SimRun>& runs);

}  // namespace sat::sim
