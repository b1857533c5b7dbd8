#include "sweep/helper_metrics.h"

#include <algorithm>

namespace sat::sweep {

std::vector<MetricPoint> HelperMetrics::Add(const measure::HelperMessage& m, double now_unix) {
  std::vector<MetricPoint> points;
  if (m.type == measure::MessageType::kProgress || m.type == measure::MessageType::kDone) {
    for (const auto& [name, value] : m.metrics) latest_[name] = value;
    steps_ = std::max(steps_, m.steps);
  } else if (m.type == measure::MessageType::kMetrics) {
    for (const auto& [name, value] : m.metrics) {
      points.push_back(MetricPoint{name, value, m.steps, now_unix});
      latest_[name] = value;
    }
  }
  return points;
}

std::vector<MetricPoint> HelperMetrics::Missing(const MetricLog& log, double now_unix) const {
  std::vector<MetricPoint> points;
  for (const auto& [name, value] : latest_) {
    if (log.Last(name) != value) points.push_back(MetricPoint{name, value, steps_, now_unix});
  }
  return points;
}

}  // namespace sat::sweep
