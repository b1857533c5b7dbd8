// The training throughput of the command `saturate monitor -- CMD` started, from the helper channel
// (docs/helper-protocol.md): the automatic instrumentation of PyTorch, or `import saturate`, reports cumulative
// steps, samples and loop times; this turns them into the rates of one sampling interval, for the fields
// proc.samples_per_s, proc.steps_per_s and proc.data_wait.
//
// TrainingFeed reads the started command's channel into a TrainingMeter and writes each interval's rates into the sample.
//
// Not thread-safe; the monitor's loop feeds it and takes the rates once per sample.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "measure/helper_message.h"
#include "measure/instrumented_run.h"
#include "measure/progress.h"
#include "telemetry/sample.h"
#include "util/result.h"

namespace sat::monitor {

// Rates over one sampling interval; unset (N/A, never 0) while no process of the run has reported progress.
struct TrainingRates {
  // Samples reported in the interval over the training time they took: per process, from the process's previous
  // report to its latest, less the time spent in other loaders (excluded_s); the processes' rates add. 0 when
  // the run reported before but no process reported in the interval (no step ended: a hang, a validation pass,
  // or steps longer than the interval).
  std::optional<double> samples_per_s;
  std::optional<double> steps_per_s;  // samples_per_s x the interval's steps per sample
  // Share of the interval's loop time spent waiting for the loader, 0..1; unset without loop time in it, and
  // until the first rate (the counters before it count in the first interval that has one).
  std::optional<double> data_wait_share;
};

class TrainingMeter {
 public:
  // Messages whose `run` is not `run_id` are ignored.
  explicit TrainingMeter(std::string run_id);

  // Every message of the channel, in arrival order; only progress and done count.
  void Add(const measure::HelperMessage& message);

  // The rates since the previous call (since construction for the first), and starts the next interval.
  TrainingRates Take();

  const measure::ProgressTotals& totals() const { return progress_.totals(); }

 private:
  measure::ProgressAggregator progress_;
  measure::ProgressTotals at_take_;  // the totals at the previous Take
  // Per process, the samples and training seconds of the interval's observations.
  std::map<int64_t, std::pair<double, double>> interval_;
  bool observed_ = false;  // some process reported twice: there is a rate
};

// The command monitor started (with its own helper channel), and its training rates per sampling interval.
class TrainingFeed {
 public:
  explicit TrainingFeed(std::unique_ptr<measure::InstrumentedRun> run);

  measure::InstrumentedRun& run() { return *run_; }

  // Reads what arrived, waiting up to `timeout_ms` for the first datagram. The kernel queues only a few, so the
  // loop calls this often.
  Status Drain(int timeout_ms);

  // The interval's rates into the sample's tree (a tree that is gone has none, like its CPU), and a new interval.
  Status Annotate(telemetry::Sample& s);

 private:
  std::unique_ptr<measure::InstrumentedRun> run_;
  TrainingMeter meter_;
};

}  // namespace sat::monitor
