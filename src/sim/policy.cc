#include "sim/policy.h"

#include <fmt/format.h>

#include <cmath>

#include "util/strings.h"

namespace sat::sim {

const std::vector<Policy>& AllPolicies() {
  static const std::vector<Policy> all = {Policy::kSequential, Policy::kOnePerGpu, Policy::kFixedK, Policy::kThreshold,
                                          Policy::kMeasured};
  return all;
}

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kSequential:
      return "sequential";
    case Policy::kOnePerGpu:
      return "one-per-gpu";
    case Policy::kFixedK:
      return "fixed-k";
    case Policy::kThreshold:
      return "threshold";
    case Policy::kMeasured:
      return "saturate";
  }
  return "?";
}

Result<Policy> ParsePolicy(std::string_view name) {
  std::vector<std::string> names;
  for (Policy p : AllPolicies()) {
    if (PolicyName(p) == name) return p;
    names.emplace_back(PolicyName(p));
  }
  std::string msg = fmt::format("unknown policy '{}'", name);
  if (auto guess = ClosestMatch(name, names)) msg += fmt::format("; did you mean '{}'?", *guess);
  return UsageError(msg + fmt::format(" (one of {})", fmt::join(names, ", ")));
}

Status ValidateParams(const PolicyParams& p) {
  if (p.fixed_k < 1) return UsageError("fixed-k needs k >= 1");
  if (!(p.free_fraction > 0 && p.free_fraction <= 1)) return UsageError("free fraction must be in (0, 1]");
  if (p.max_runs_per_gpu < 1) return UsageError("max runs per GPU must be >= 1");
  if (!(p.margin >= 0 && std::isfinite(p.margin))) return UsageError("memory margin must be >= 0");
  if (!std::isfinite(p.min_gain)) return UsageError("minimum gain must be a number");
  if (!(p.cpu_limit > 0 && std::isfinite(p.cpu_limit))) return UsageError("CPU limit must be > 0");
  return Status::Ok();
}

}  // namespace sat::sim
