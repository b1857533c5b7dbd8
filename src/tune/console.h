// Tune's text for people: the live progress line of a trial, the rows of the trial table (shared with
// report.html), and the final console report. Pure formatting.
#pragma once

#include <string>
#include <vector>

#include "tune/tune.h"

namespace sat::tune {

// One trial as table cells.
struct TrialRow {
  int id = 0;
  std::string step, mode;
  std::string settings;  // the knob values it ran with ("batch_size=64 workers=2"); "(script defaults: ...)"
  std::string rate;      // "1,234" or "-"
  std::string interval;  // "±2.1%" or ""
  // "ok", "ok, not converged" (a wider interval than the target, still counts), "ok, does not count" (compare.h),
  // "too slow to measure in this budget", "knob not applied", "gpu_oom", ...; " (cached)" when from the cache
  std::string result;
  std::string time;      // "8.1s"
  bool ok = false;
};

TrialRow MakeRow(const Trial& trial, const std::vector<std::string>& knob_order);
std::vector<TrialRow> TrialRows(const TuneResult& result);

// "trial 3  loader   workers=2 batch_size=64  (up to 15s)" when it starts; with its rate and result when it ends.
// Knobs in the event's order (by name when it has none).
std::string ProgressLine(const TrialEvent& event);

// The summary printed at the end: trials table, reasons, the recommendation and the command to paste, what it
// needs per GPU, skipped knobs and warnings.
std::string ConsoleReport(const TuneResult& result);

// "Injected by saturate (the script has no flag for them): workers, pin_memory. ..." and one line per code
// change ("  - DataLoader at train.py:57: DataLoader(..., num_workers=4, pin_memory=True)"); empty when nothing
// was injected.
std::string InjectedText(const TuneResult& result);

// "; not distinguishable from the recommended batch" when the batch step could not tell the fastest batch from
// the recommended one; empty otherwise.
std::string FastestTie(const SearchOutcome& search);

// "batch_size=300 workers=2", or "not reached (the climb stopped at batch 256, which fits)"; empty when the batch
// step did not run.
std::string LargestBatchText(const TuneResult& result);

// The knob names of a result in search order.
std::vector<std::string> KnobOrder(const TuneResult& result);

}  // namespace sat::tune
