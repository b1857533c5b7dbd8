#include "cli/gpu_setup.h"

#include <fmt/core.h>

#include "telemetry/nvml.h"
#include "util/strings.h"

namespace sat::cli {

Result<Gpus> OpenGpus(const std::string& ids) {
  Gpus g;
  for (const auto& part : ids.empty() ? std::vector<std::string>{} : Split(ids, ',')) {
    auto v = ParseInt(part);
    if (!v || *v < 0) return UsageError(fmt::format("GPU index '{}' is not a number (-i takes e.g. 0 or 0,1)", part));
    g.indices.push_back(static_cast<unsigned>(*v));
  }
  auto nvml = telemetry::OpenNvml();
  if (!nvml) {
    g.note = nvml.error().message;
    if (!g.indices.empty()) return UsageError(fmt::format("-i {} selects GPUs, but {}", ids, g.note));
    return g;
  }
  g.backend = std::move(*nvml);
  unsigned n = g.backend->DeviceCount();
  for (unsigned i : g.indices) {
    if (i >= n)
      return UsageError(n == 0 ? fmt::format("GPU index {} is out of range: this machine has no GPU", i)
                               : fmt::format("GPU index {} is out of range: this machine has {} GPU{} (0-{})", i, n,
                                             n == 1 ? "" : "s", n - 1));
  }
  return g;
}

}  // namespace sat::cli
