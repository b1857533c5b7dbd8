// What saturate reads of one live sweep attempt, the same on this machine (sweep/controller) and on a Slurm node
// (slurm/node_wrapper): the helper's messages into the attempt's meter and the metrics they carry, readings of its
// process tree (CPU, RSS, GPU memory, and the "torch loaded" announcement that tells a start-up from a silent
// run), and the metric values its output lines matched.
//
// The run itself, its channel and the signs every watcher reads (torch loaded, the helper seen) are
// measure::InstrumentedRun's; this adds what a sweep makes of them.
//
// Not thread-safe, except lines() (sweep/launch.h MatchedLines), which the run's supervisor thread feeds.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/helper_message.h"
#include "measure/instrumented_run.h"
#include "sweep/helper_metrics.h"
#include "sweep/launch.h"
#include "sweep/meter.h"
#include "sweep/records.h"
#include "telemetry/proc_tree.h"
#include "telemetry/sample.h"

namespace sat::sweep {

class AttemptWatch {
 public:
  // `run_id`: the attempt's SATURATE_RUN_ID; `start_t`: when it started (monotonic s); `on_gpu`: its footprint is
  // GPU memory; `auto_instrumentation`: a run that loads torch will report steps, so it is starting up until then.
  AttemptWatch(std::string run_id, double start_t, bool on_gpu, const MeterOptions& options,
               bool auto_instrumentation);

  const std::string& run_id() const { return run_id_; }
  RunMeter& meter() { return meter_; }
  const RunMeter& meter() const { return meter_; }
  // Where the run's supervisor puts the metric values its output lines matched (Launch::lines).
  const std::shared_ptr<MatchedLines>& lines() const { return lines_; }

  // Starts the attempt's command as this watch's run: `launch` with the watch's automatic-instrumentation switch,
  // its meter's window and its matched lines; on `shared` (not owned), else on a channel of its own. Errors as
  // measure::InstrumentedRun::Start.
  Result<std::unique_ptr<measure::InstrumentedRun>> Start(Launch launch, measure::HelperChannel* shared = nullptr);
  // A channel message; those of other runs are ignored. Returns the metric points a helper report carried.
  std::vector<MetricPoint> OnMessage(const measure::HelperMessage& m);
  // Reads the tree of `run` at `now` (monotonic s), has `run` look for torch in it while that matters
  // (WantsTorchSign), and takes the reading (OnTree); returns it (empty when the command has not started or is
  // gone).
  telemetry::ProcTreeSample ReadTree(measure::InstrumentedRun& run, const telemetry::Sample& sample, double now);
  // A reading of the attempt's tree at `now`, its GPU memory from `sample`; `torch_loaded`: the tree has mapped
  // torch, so a run with the automatic instrumentation will report its steps and is starting up until then.
  void OnTree(const telemetry::ProcTreeSample& tree, const telemetry::Sample& sample, double now, bool torch_loaded);
  // Whether a sign of torch would still change anything (the automatic instrumentation is on, and the meter has
  // not heard of the run yet).
  bool WantsTorchSign() const { return auto_instrumentation_ && !meter_.announced(); }
  // The metric values output lines matched since the last call.
  std::vector<MetricPoint> TakeLines() { return lines_->Take(); }
  // At the end: values the helper's reports carried that no metrics message delivered (a dropped datagram).
  std::vector<MetricPoint> Missing(const MetricLog& log) const;

 private:
  std::string run_id_;
  bool auto_instrumentation_;
  double window_s_;
  RunMeter meter_;
  HelperMetrics helper_;
  std::shared_ptr<MatchedLines> lines_ = std::make_shared<MatchedLines>();
  telemetry::ProcTreeReader tree_reader_{"/proc"};
  std::optional<telemetry::TreeCounters> prev_tree_;
  double prev_tree_t_ = 0;
  long ticks_per_s_;
};

}  // namespace sat::sweep
