// The metrics a run's helper messages carry, for the sweep's local controller and the Slurm node wrapper alike:
// `metrics` messages are points as they come; progress and done reports carry each metric's latest value, which
// recovers a value whose `metrics` datagram was dropped when the attempt ends.
//
// Plain data; not thread-safe (the loop that reads the channel owns it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/helper_message.h"
#include "sweep/records.h"
#include "sweep/metrics.h"

namespace sat::sweep {

class HelperMetrics {
 public:
  // The new metric points of `m` (a `metrics` message; none for other types), stamped `now_unix`.
  std::vector<MetricPoint> Add(const measure::HelperMessage& m, double now_unix);
  // At the attempt's end: the latest reported value of each metric that `log` does not hold as its last value.
  std::vector<MetricPoint> Missing(const MetricLog& log, double now_unix) const;

 private:
  std::map<std::string, double> latest_;
  int64_t steps_ = 0;
};

}  // namespace sat::sweep
