// The estimator's input as it arrived, kept so a measurement can be replayed: probe's stages write each
// observation with the second it was fed (estimator.csv in the stage's log folder), and the estimator-accuracy
// benchmark replays a long run's log to find where the stopping rule would have stopped it, and at what estimate,
// on the same data (two runs of one command differ on a shared machine; one run's prefix does not).
//
// The file: a header line, then one row per observation, "fed_s,t_end_s,duration_s,samples,stream"; fed_s is
// seconds since the stage started, the other columns are measure::Observation's (CLOCK_MONOTONIC seconds).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "measure/estimator.h"
#include "util/result.h"

namespace sat::measure {

struct FedObservation {
  double fed_s = 0;  // when the measurement loop handed it to the estimator, seconds since the stage started
  Observation observation;
};

// Appends rows to one file. The log is an aid, never part of the measurement: a file that cannot be opened or
// written is given up at the first failure, silently, and the stage goes on. Not thread-safe; one owner.
class ObservationLog {
 public:
  explicit ObservationLog(const std::string& path);  // an empty path logs nothing
  ~ObservationLog();
  ObservationLog(const ObservationLog&) = delete;
  ObservationLog& operator=(const ObservationLog&) = delete;

  void Append(double fed_s, const Observation& observation);

 private:
  std::FILE* file_ = nullptr;
};

// The rows of a log written by ObservationLog. Errors name the file and the line.
Result<std::vector<FedObservation>> ReadObservationLog(const std::string& path);

struct EarlyStop {
  bool stopped = false;  // the estimate converged before the log ended
  double at_s = 0;       // fed time of the check that stopped it (or of the last observation)
  SteadyState estimate;  // at that check, or over the whole log when it never converged
  size_t observations = 0;
};

// Feeds `log` in arrival order and checks convergence every `tick_s` of fed time from `settle_s` on, as a probe
// stage's loop checks after each 0.1 s poll; the first converged check is where that stage would have stopped.
EarlyStop ReplayEarlyStop(std::vector<FedObservation> log, const EstimatorOptions& options, double settle_s,
                          double tick_s = 0.1);

}  // namespace sat::measure
