// The live figures saturate's commands publish while they run: the latest telemetry sample (monitor), the
// training runs saturate drives with their throughput (probe stages, tune trials, sweep runs), and a short history
// of each run's throughput that a dashboard can draw. Collection publishes here; whatever shows the figures reads a
// snapshot: `--serve` renders one per scrape as a Prometheus page (monitor/exposition.h, serve/). Nothing here
// draws, serves or samples.
//
// Threads: every member may be called from any thread at any time; each call takes one internal lock for as long
// as it copies, and none calls out while holding it. Collectors publish on their own threads (the monitor loop,
// a probe stage's measurement loop, the sweep loop); readers snapshot on theirs.
//
// Times are CLOCK_MONOTONIC seconds (telemetry::MonotonicSeconds), as in the helper's progress reports.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "measure/estimator.h"
#include "telemetry/sample.h"

namespace sat::live {

// Label names and values of one series, in the order they are written. Names must be valid Prometheus label
// names; values are escaped on output.
using Labels = std::vector<std::pair<std::string, std::string>>;

// A training run saturate drives (a probe stage, a tune trial, a sweep run) and its throughput.
struct RunSeries {
  Labels labels;                        // e.g. {{"command", "probe"}, {"stage", "full"}}
  std::optional<double> samples_per_s;  // unset while it has not reported: left out
};

// The figures at one moment.
struct Figures {
  std::optional<telemetry::Sample> sample;  // the latest; unset before the first
  std::string hostname;                     // dcgm-exporter's Hostname label; left out when empty
  std::string tree_command;                 // the watched tree's command line, its `command` label
  std::vector<RunSeries> runs;
};

// One run's throughput over the recent past, oldest point first.
struct RunHistory {
  Labels labels;
  std::vector<std::pair<double, double>> points;  // (time s, samples/s)
};

class LiveFigures {
 public:
  // Seconds of progress a run's samples/s is measured over.
  static constexpr double kRateWindowS = 5;
  // The history: at most one point per run every kHistoryStepS, kept for kHistoryS (runs that ended stay until
  // their last point ages out).
  static constexpr double kHistoryStepS = 1;
  static constexpr double kHistoryS = 600;

  // `hostname` becomes dcgm-exporter's Hostname label of GPU series; empty leaves it out.
  explicit LiveFigures(std::string hostname = "");

  // The latest sample (replaces the previous one), and the command line of the tree it watches.
  void SetSample(const telemetry::Sample& sample);
  void SetTreeCommand(std::string command);

  // Progress of a run saturate drives, as one of its processes reported it (measure::ProgressAggregator or a
  // parsed output line). The first call for a `key` adds the run with these labels; later calls keep the first
  // labels.
  void ObserveRun(const std::string& key, const Labels& labels, const measure::Observation& progress);
  // The run is over: its series goes (its history stays until it ages out).
  void EndRun(const std::string& key);
  // Replaces every run `source` set before with `runs`, whose rates the caller measured itself at `now_s` (sweep's
  // runs).
  void SetRuns(const std::string& source, std::vector<RunSeries> runs, double now_s);

  // What is live now.
  Figures Snapshot(double now_s) const;
  // Each run's throughput over the last kHistoryS seconds before `now_s`, runs in the order they first reported.
  std::vector<RunHistory> History(double now_s) const;

 private:
  struct ObservedRun {
    Labels labels;
    std::deque<measure::Observation> recent;  // the last kRateWindowS seconds of progress, oldest first
  };
  struct Trace {
    int64_t order = 0;  // first report
    Labels labels;
    std::deque<std::pair<double, double>> points;
  };
  // Adds a point to the history of `key` unless its last one is younger than kHistoryStepS; drops what aged out.
  void Record(const std::string& key, const Labels& labels, double t, double samples_per_s);

  mutable std::mutex mu_;
  const std::string hostname_;
  std::optional<telemetry::Sample> sample_;
  std::string tree_command_;
  std::map<std::string, ObservedRun> observed_;
  std::map<std::string, std::vector<RunSeries>> set_;
  std::map<std::string, Trace> history_;
  int64_t next_order_ = 0;
};

// The samples/s of a run from its processes' progress ending in (now_s - window_s, now_s]: per process (stream),
// the samples over the training seconds they took; the processes' rates add. 0 when none ended in the window
// (the run reported before, so it stalled, validates, or takes steps longer than the window).
double WindowRate(const std::deque<measure::Observation>& recent, double now_s, double window_s);

}  // namespace sat::live
