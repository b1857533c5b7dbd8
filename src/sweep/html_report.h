// report.html of a sweep (report/page.h's look, nothing fetched): written beside the journal, rewritten while the
// sweep runs, and by `saturate sweep report SPEC` from the journal afterwards. It shows
//   - a timeline of every attempt on its device (a GPU, the CPU pool, or a Slurm node), one bar per attempt
//     coloured by how it ended (AttemptOutcomeName);
//   - the packing degree over time: runs at once, and the most that shared one device;
//   - each device's memory and utilisation lanes where the sweep recorded them (sweep/device_log.h), else the sum
//     of the measured peaks of the runs it held;
//   - the makespan against running the same attempts one by one (the sum of their own durations), the GPU-hours
//     (in money with a price) and the energy (sweep/cost.h);
//   - the table of runs with their parameters and metrics, sortable.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sweep/device_log.h"
#include "sweep/records.h"
#include "sweep/status.h"
#include "util/result.h"

namespace sat::sweep {

// The page's file for a journal: "x.journal" -> "x.report.html", anything else gets ".report.html" appended.
std::string ReportPathFor(const std::string& journal_path);

// The lane of an attempt on the timeline: its Slurm node when `node` knows it ("node gpu-07"), "Slurm" for a
// Slurm attempt whose node is not known, GpuLane(gpu_index), else kCpuPoolLane.
using NodeOf = std::function<std::string(const AttemptRecord&)>;
std::string LaneOf(const AttemptRecord& attempt, const NodeOf& node);

// How an attempt shows on the timeline: "running" (no end yet), "done" (finished), "early-stopped", "oom"
// (gpu_oom, host_oom), "interrupted" (requeued on resume or when saturate stopped), "retried" (ended badly and its
// run was tried again: `later_attempt`), else "failed".
std::string AttemptOutcomeName(const AttemptRecord& attempt, bool later_attempt);

// What the page is drawn from.
struct SweepPage {
  SweepStatus status;
  std::vector<AttemptRecord> attempts;  // every attempt of every run, by start
  std::vector<std::string> lanes;       // parallel to attempts: LaneOf
  std::vector<DevicePoint> devices;     // sweep/device_log.h; empty when not recorded
  std::optional<double> price_per_gpu_hour;
  double now_unix = 0;   // the end of bars still running
  bool live = false;     // a sweep is writing the page as it runs: the page reloads itself
};

// Reads the journal at `journal_path` read-only (Journal::OpenReadOnly; safe while a sweep runs) and the device
// log in its log folder. Errors as ReadStatus's.
Result<SweepPage> ReadSweepPage(const std::string& journal_path, const NodeOf& node = {});

struct SweepTiming {
  double makespan_s = 0;     // the first attempt's start to the last one's end (running ones: now)
  double one_by_one_s = 0;   // the attempts' own durations summed
  int attempts = 0;
};
SweepTiming TimingOf(const SweepPage& page);

// The whole page.
std::string SweepHtml(const SweepPage& page);

}  // namespace sat::sweep
