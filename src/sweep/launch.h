// How a sweep run is started, the same on this machine (sweep/controller) and on a Slurm node
// (slurm/node_wrapper): the helper channel and run id, the automatic instrumentation's switch, a report interval
// fitted to the meter's window, unbuffered output, saturate's Python folder on PYTHONPATH, and the metric pattern's
// matches handed from the run's supervisor thread to the loop that reads them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "run/runner.h"
#include "sweep/metrics.h"

namespace sat::sweep {

// Metric values matched in output lines. Thread-safe: the run's supervisor thread pushes, the loop takes.
class MatchedLines {
 public:
  void Push(std::vector<std::pair<std::string, double>> values, double time_unix);
  std::vector<MetricPoint> Take();

 private:
  std::mutex mu_;
  std::vector<MetricPoint> points_;
};

struct Launch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the spec's; the entries below are added over it
  std::string channel_path;                 // the helper channel (SATURATE_CHANNEL)
  std::string run_id;                       // SATURATE_RUN_ID: tells this run's reports apart on the channel
  bool auto_instrumentation = true;         // false: SATURATE_AUTO=0
  double window_s = 1;                      // the meter's window: about six reports per window
  std::string log_dir;
  double time_limit_s = 0;  // 0: none
  double stop_grace_s = 5;
  // Lines of either stream that `pattern` matches go to `lines`; no pattern, no matching.
  const MetricPattern* pattern = nullptr;
  std::shared_ptr<MatchedLines> lines;
};

run::RunSpec LaunchSpec(const Launch& launch);

}  // namespace sat::sweep
