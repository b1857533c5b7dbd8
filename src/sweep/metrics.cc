#include "sweep/metrics.h"

#include <algorithm>

namespace sat::sweep {

MetricLog::MetricLog(std::optional<MetricSpec> metric, size_t max_points)
    : metric_(std::move(metric)), max_points_(max_points) {}

bool MetricLog::Better(double a, double b) const {
  return metric_ && (metric_->goal == Goal::kMinimize ? a < b : a > b);
}

void MetricLog::Add(MetricPoint point) {
  const size_t arrival = arrivals_++;
  last_[point.name] = point.value;
  if (points_.size() < max_points_) {
    points_.push_back(std::move(point));
    return;
  }
  ++dropped_;
  if (metric_ && point.name == metric_->name &&
      (!overflow_best_ || Better(point.value, overflow_best_->second.value))) {
    overflow_best_ = std::pair(arrival, point);
  }
  const std::string name = point.name;
  overflow_last_[name] = std::pair(arrival, std::move(point));
}

std::vector<MetricPoint> MetricLog::Points() const {
  std::vector<MetricPoint> out = points_;
  std::vector<std::pair<size_t, MetricPoint>> extra;
  for (const auto& [name, last] : overflow_last_) extra.push_back(last);
  if (overflow_best_ && overflow_last_.at(overflow_best_->second.name).first != overflow_best_->first) {
    extra.push_back(*overflow_best_);
  }
  std::sort(extra.begin(), extra.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [arrival, point] : extra) out.push_back(std::move(point));
  return out;
}

std::optional<double> MetricLog::Last(const std::string& name) const {
  auto it = last_.find(name);
  return it == last_.end() ? std::nullopt : std::optional<double>(it->second);
}

}  // namespace sat::sweep
