// Turns the helper's cumulative progress reports of one run, from any number of its processes, into estimator
// observations, and keeps the run's latest totals: where loop time goes and how much GPU memory it took.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/estimator.h"
#include "measure/helper_message.h"

namespace sat::measure {

// One process's share of a run: a rank of a distributed job, or the run's one trainer. Cumulative since it began
// tracking (counter restarts included), like ProgressTotals.
struct ProcessTotals {
  int64_t pid = 0;
  std::optional<int64_t> rank;  // from its progress reports, when it is one of several ranks
  int64_t steps = 0;
  double samples = 0;
  double wait_s = 0, step_s = 0;
  double after_step_s = 0;                   // the automatic instrumentation's after_step phase
  std::optional<double> before_backward_s;   // automatic instrumentation only
  // Samples over the seconds between its first and latest report since its counters last started, other
  // loaders' time left out; 0 before two reports.
  double samples_per_s = 0;
};

// Cumulative totals of a run, summed over its processes (including counts from before a counter reset).
struct ProgressTotals {
  int64_t steps = 0;
  double samples = 0;
  double wait_s = 0;  // waiting for the loader to hand over a batch
  double step_s = 0;  // the loop body, phases included
  // Automatic instrumentation: seconds in other loaders (validation, test) between training steps. Not part of
  // wait_s or step_s, so not of the shares below either.
  double excluded_s = 0;
  std::map<std::string, double> phases_s;
  std::optional<int64_t> mem_peak_bytes;      // largest peak any process reported (CUDA only)
  std::optional<int64_t> mem_reserved_bytes;  // largest reserved memory any process reported
  int processes = 0;                          // distinct pids that reported progress
  int processes_done = 0;                     // of them, those that sent `done`
  std::string done_reason;                    // of the latest `done`
  std::vector<ProcessTotals> per_process;     // processes that reported steps, by pid

  // Shares of the loop time (wait_s + step_s), each 0 while no loop time has been reported.
  double WaitShare() const;
  std::map<std::string, double> PhaseShares() const;
};

// Not thread-safe; one owner feeds and reads it.
class ProgressAggregator {
 public:
  static constexpr double kMinObservationS = 1e-3;

  // Only messages whose `run` equals run_id are taken.
  explicit ProgressAggregator(std::string run_id);

  // Takes a progress or done message and returns the progress its process made since that process's previous
  // report: {t, t - previous t - growth of excluded_s, samples - previous samples, stream = pid}. Time spent in
  // other loaders (excluded_s, e.g. a validation pass between two training steps) is left out, so it does not
  // read as slow training; the duration never drops below min(t - previous t, kMinObservationS), so a report
  // whose excluded time overstates the elapsed time cannot give a zero or negative duration. The first report of
  // a pid, or one whose counters went backwards (the helper restarted tracking), only sets a new baseline and
  // returns nothing; so does a report no later than the previous one. Other messages are ignored.
  std::optional<Observation> Add(const HelperMessage& message);

  const ProgressTotals& totals() const { return totals_; }
  size_t resets() const { return resets_; }  // counter restarts seen

 private:
  // The counters of one process as cumulated by the helper.
  struct Counters {
    double t = 0;
    int64_t steps = 0;
    double samples = 0, wait_s = 0, step_s = 0, excluded_s = 0;
    double before_backward_s = 0;
    std::map<std::string, double> phases_s;
    void Add(const Counters& other);  // sums everything but t
  };
  struct Process {
    Counters last;     // latest report
    Counters carried;  // totals from before the latest reset
    Counters base;     // the first report since the latest reset: where its rate starts
    std::optional<int64_t> rank;
    bool before_backward = false;  // it reports before_backward_s
    bool done = false;
  };
  void Recount();

  std::string run_id_;
  std::map<int64_t, Process> processes_;
  ProgressTotals totals_;
  size_t resets_ = 0;
};

}  // namespace sat::measure
