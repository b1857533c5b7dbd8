#include "sim/policy.h"

#include <fmt/format.h>

#include "util/range.h"
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
    case Policy::kSlurmSized:
      return "slurm-sized";
  }
  return "?";
}

Result<Policy> ParsePolicy(std::string_view name) {
  std::vector<std::string> names;
  std::vector<Policy> known = AllPolicies();
  known.push_back(Policy::kSlurmSized);
  for (Policy p : known) {
    if (PolicyName(p) == name) return p;
    names.emplace_back(PolicyName(p));
  }
  std::string msg = fmt::format("unknown policy '{}'", name);
  if (auto guess = ClosestMatch(name, names)) msg += fmt::format("; did you mean '{}'?", *guess);
  return UsageError(msg + fmt::format(" (one of {})", fmt::join(names, ", ")));
}

Status ValidateParams(const PolicyParams& p) {
  return CheckAllInRange({{"fixed-k", static_cast<double>(p.fixed_k), AtLeast(1)},
                          {"free fraction", p.free_fraction, LeftOpen(0, 1)},
                          {"max runs per GPU", static_cast<double>(p.max_runs_per_gpu), AtLeast(1)},
                          {"memory margin", p.margin, AtLeast(0)},
                          {"minimum gain", p.min_gain, Interval{}},
                          {"CPU limit", p.cpu_limit, Above(0)},
                          {"shards per GPU", static_cast<double>(p.shards_per_gpu), AtLeast(1)},
                          {"Slurm margin", p.slurm_margin, AtLeast(0)}});
}

}  // namespace sat::sim
