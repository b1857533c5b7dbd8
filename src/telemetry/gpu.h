// The GPU vendor seam. NVML is the one real backend (nvml.cc); tests load a stand-in NVML library
// through SATURATE_NVML_LIBRARY, which drives the very same code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "telemetry/sample.h"
#include "util/result.h"

namespace sat::telemetry {

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual unsigned DeviceCount() const = 0;
  // Reads the given devices (every device when `indices` is empty), in the order given.
  // Fields the device does not support come back nullopt. Not thread-safe: one caller at a time.
  virtual std::vector<GpuSample> Sample(const std::vector<unsigned>& indices) = 0;
  // One line for logs: library path, NVML and driver versions.
  virtual std::string Description() const = 0;
};

}  // namespace sat::telemetry
