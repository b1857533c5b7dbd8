#include "telemetry/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sat::telemetry {

double Percentile(const std::vector<double>& sorted, double p) {
  double h = static_cast<double>(sorted.size() - 1) * std::clamp(p, 0.0, 1.0);
  size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

std::optional<Summary> Summarize(std::vector<double> values) {
  std::erase_if(values, [](double v) { return std::isnan(v); });
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  Summary s;
  s.count = values.size();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.p50 = Percentile(values, 0.50);
  s.p95 = Percentile(values, 0.95);
  s.min = values.front();
  s.max = values.back();
  return s;
}

std::optional<Summary> Summarize(const std::vector<Sample>& samples, const SampleField& field) {
  std::vector<double> values;
  values.reserve(samples.size());
  for (const Sample& sample : samples) {
    if (std::optional<double> v = field(sample)) values.push_back(*v);
  }
  return Summarize(std::move(values));
}

}  // namespace sat::telemetry
