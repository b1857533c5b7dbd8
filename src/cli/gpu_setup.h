// Opening the GPU backend for a command, and checking the user's GPU selection against it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "telemetry/gpu.h"
#include "util/result.h"

namespace sat::cli {

struct Gpus {
  std::unique_ptr<telemetry::GpuBackend> backend;  // null: no NVIDIA driver (`note` says why)
  std::vector<unsigned> indices;                   // the selection; empty: every GPU
  std::string note;                                // why there is no backend, for one plain message
};

// Loads NVML (see telemetry/nvml.h) and parses `ids` ("0", "0,2", empty for all). An index the machine does not
// have is a usage error; no driver is not an error (backend stays null), but a selection without a driver is.
Result<Gpus> OpenGpus(const std::string& ids);

}  // namespace sat::cli
