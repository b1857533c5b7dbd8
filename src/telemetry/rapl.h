// The CPU packages' energy from the kernel's powercap interface (RAPL: Intel, and AMD through the same driver):
// the sum over the top-level package domains <sys>/class/powercap/intel-rapl:N/energy_uj, kept as one counter in
// joules that carries on across each domain's wrap at its max_energy_range_uj. Its subdomains (intel-rapl:N:M,
// cores and uncore) are inside the package's figure and are not added again.
//
// energy_uj is readable by root only on kernels since 5.10 (CVE-2020-8694), and a VM usually has no powercap at
// all: then Read() says nullopt, never 0. Not thread-safe; one per sampler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/procfs.h"

namespace sat::telemetry {

class RaplCounter {
 public:
  explicit RaplCounter(const std::string& sys_root = "/sys");

  // Joules the packages used since the first Read() (which says 0); nullopt when there is no package domain or
  // one of them cannot be read now.
  std::optional<double> Read();
  size_t domains() const { return domains_.size(); }

 private:
  struct Domain {
    std::string energy_path;
    uint64_t range_uj = 0;  // where energy_uj wraps to 0; 0 when unknown (a drop then counts as nothing)
    std::optional<uint64_t> prev_uj;
  };
  std::vector<Domain> domains_;
  double total_j_ = 0;
  FileReader reader_;
};

}  // namespace sat::telemetry
