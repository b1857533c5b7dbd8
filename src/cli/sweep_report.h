// A sweep's report.html (sweep/html_report.h) from the command line: written once from the journal (`saturate sweep
// report`, and at the end of a sweep), and rewritten while a sweep runs (LiveReport).
#pragma once

#include <optional>
#include <string>

#include "sweep/html_report.h"
#include "util/result.h"

namespace sat::cli {

// Reads the journal (Slurm attempts on their nodes' lanes) and writes the page to `out` atomically (temporary file
// and rename: a browser never reads half a page). `live`: the page says the sweep runs and reloads itself.
// Returns what was drawn.
Result<sweep::SweepPage> WriteSweepReport(const std::string& journal_path, const std::string& out,
                                          std::optional<double> price, bool live);

// Keeps a running sweep's page fresh: Poll() (from the sweep's loop, on every event and snapshot) rewrites it when
// kEveryS seconds have passed since the last time, and never spends more than a twentieth of the sweep's time on
// it (a page that took 0.5 s to write waits 10 s). Three failures in a row (not one: the journal may not hold the
// sweep yet at its very start) are said once on stderr and end the refreshing; the sweep goes on. Not thread-safe:
// one loop calls it.
class LiveReport {
 public:
  static constexpr double kEveryS = 3;
  LiveReport(std::string journal_path, std::optional<double> price);
  void Poll();
  // The page as the sweep left it (not live). Error when it cannot be written.
  Status Finish();
  const std::string& path() const { return out_; }

 private:
  std::string journal_, out_;
  std::optional<double> price_;
  double next_ = 0;
  int failures_ = 0;  // in a row; kMaxFailures ends the refreshing
  static constexpr int kMaxFailures = 3;
};

}  // namespace sat::cli
