// A run's metrics: read from its output lines with the sweep's `saturate.metric_pattern`, or sent by the helper
// (`saturate.report(loss=...)`), and kept per attempt for the journal.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sweep/metric_pattern.h"
#include "sweep/records.h"
#include "util/result.h"

namespace sat::sweep {

// The metric points of one attempt, bounded. The first `max_points` are kept as they come; after that only the
// latest point of each name and the best point of the sweep's metric, so that what the journal derives (the best
// value of the sweep metric, the last value of the others) stays exact. Not thread-safe.
class MetricLog {
 public:
  explicit MetricLog(std::optional<MetricSpec> metric, size_t max_points = 20000);

  void Add(MetricPoint point);
  // The kept points in the order they were reported.
  std::vector<MetricPoint> Points() const;
  // The latest value added for `name`.
  std::optional<double> Last(const std::string& name) const;
  size_t dropped() const { return dropped_; }

 private:
  bool Better(double a, double b) const;  // a better than b by the sweep metric's goal

  std::optional<MetricSpec> metric_;
  size_t max_points_;
  std::vector<MetricPoint> points_;
  // Beyond max_points: per name, the latest point and (sweep metric) the best one, each with its arrival number.
  std::map<std::string, std::pair<size_t, MetricPoint>> overflow_last_;
  std::optional<std::pair<size_t, MetricPoint>> overflow_best_;
  std::map<std::string, double> last_;
  size_t arrivals_ = 0, dropped_ = 0;
};

}  // namespace sat::sweep
