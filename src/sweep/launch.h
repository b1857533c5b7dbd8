// How a sweep run is started, the same on this machine (sweep/controller) and on a Slurm node
// (slurm/node_wrapper): the automatic instrumentation's switch, a report interval fitted to the meter's window,
// and the metric pattern's matches handed from the run's supervisor thread to the loop that reads them. The
// helper's channel and run id come from measure::InstrumentedRun, which starts it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "measure/instrumented_run.h"
#include "sweep/metrics.h"

namespace sat::sweep {

// Metric values matched in output lines, from the run's supervisor thread to the loop.
using MatchedLines = measure::LineHandoff<MetricPoint>;

struct Launch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the spec's; the helper's entries are added over it
  // AttemptWatch::Start sets these three from the watch.
  bool auto_instrumentation = true;  // false: SATURATE_AUTO=0
  double window_s = 1;               // the meter's window: about six reports per window
  std::string log_dir;
  double time_limit_s = 0;  // 0: none
  double stop_grace_s = 5;
  // Lines of either stream that `pattern` matches go to `lines`; no pattern, no matching.
  const MetricPattern* pattern = nullptr;
  std::shared_ptr<MatchedLines> lines;
};

measure::InstrumentedLaunch LaunchSpec(const Launch& launch);

}  // namespace sat::sweep
