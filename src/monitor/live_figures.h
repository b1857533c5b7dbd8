// What `--serve` exports, as the collecting side publishes it: the latest telemetry sample (monitor), and the
// training runs saturate drives with their throughput (probe stages, tune trials, sweep runs). The HTTP server
// reads a snapshot per scrape and renders it with RenderExposition.
//
// Threads: every member may be called from any thread at any time; each call takes one internal lock for as long
// as it copies, and none calls out while holding it. Collectors publish on their own threads (the monitor loop,
// a probe stage's measurement loop, the sweep loop); the server snapshots on its own.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "measure/estimator.h"
#include "monitor/exposition.h"
#include "telemetry/sample.h"

namespace sat::monitor {

class LiveFigures {
 public:
  // Seconds of progress a run's samples/s is measured over.
  static constexpr double kRateWindowS = 5;

  // `hostname` becomes dcgm-exporter's Hostname label of GPU series; empty leaves it out.
  explicit LiveFigures(std::string hostname = "");

  // The latest sample (replaces the previous one), and the command line of the tree it watches.
  void SetSample(const telemetry::Sample& sample);
  void SetTreeCommand(std::string command);

  // Progress of a run saturate drives, as one of its processes reported it (measure::ProgressAggregator or a
  // parsed output line; times are CLOCK_MONOTONIC seconds). The first call for a `key` adds the run with these
  // labels; later calls keep the first labels.
  void ObserveRun(const std::string& key, const Labels& labels, const measure::Observation& progress);
  // The run is over: its series goes.
  void EndRun(const std::string& key);
  // Replaces every run `source` set before with `runs`, whose rates the caller measured itself (sweep's runs).
  void SetRuns(const std::string& source, std::vector<RunSeries> runs);

  // What the page shows now: `now_s` is CLOCK_MONOTONIC seconds (telemetry::MonotonicSeconds).
  ExpositionInput Snapshot(double now_s) const;

 private:
  struct ObservedRun {
    Labels labels;
    std::deque<measure::Observation> recent;  // the last kRateWindowS seconds of progress, oldest first
  };

  mutable std::mutex mu_;
  const std::string hostname_;
  std::optional<telemetry::Sample> sample_;
  std::string tree_command_;
  std::map<std::string, ObservedRun> observed_;
  std::map<std::string, std::vector<RunSeries>> set_;
};

// The samples/s of a run from its processes' progress ending in (now_s - window_s, now_s]: per process (stream),
// the samples over the training seconds they took; the processes' rates add. 0 when none ended in the window
// (the run reported before, so it stalled, validates, or takes steps longer than the window).
double WindowRate(const std::deque<measure::Observation>& recent, double now_s, double window_s);

}  // namespace sat::monitor
