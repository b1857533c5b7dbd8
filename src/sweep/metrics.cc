#define PCRE2_CODE_UNIT_WIDTH 8
#include "sweep/metrics.h"

#include <fmt/format.h>
#include <pcre2.h>

#include <algorithm>
#include <cmath>

#include "util/strings.h"

namespace sat::sweep {

Result<MetricPattern> MetricPattern::Create(const std::string& pattern, std::string_view what) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* re =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(), PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
                    &code, &offset, nullptr);
  if (!re) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code, message, sizeof message);
    return UsageError(fmt::format("{} is not a valid regular expression: {} at offset {}", what,
                                  reinterpret_cast<const char*>(message), offset));
  }
  std::shared_ptr<const pcre2_code> compiled(re, pcre2_code_free);
  // The name table: entries of a 2-byte big-endian group number followed by the NUL-terminated name.
  uint32_t count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
  std::vector<std::pair<int, std::string>> groups;
  for (uint32_t i = 0; i < count; ++i) {
    PCRE2_SPTR entry = table + i * entry_size;
    groups.emplace_back((entry[0] << 8) | entry[1], reinterpret_cast<const char*>(entry + 2));
  }
  if (groups.empty()) {
    return UsageError(
        fmt::format("{} needs named groups, one per metric, e.g. 'val_loss=(?P<val_loss>[0-9.e+-]+)'", what));
  }
  std::sort(groups.begin(), groups.end());
  return MetricPattern(std::move(compiled), std::move(groups));
}

MetricPattern::MetricPattern(std::shared_ptr<const pcre2_code> code, std::vector<std::pair<int, std::string>> groups)
    : code_(std::move(code)), groups_(std::move(groups)) {}

std::vector<std::string> MetricPattern::names() const {
  std::vector<std::string> names;
  for (const auto& [number, name] : groups_) names.push_back(name);
  return names;
}

std::vector<std::pair<std::string, double>> MetricPattern::Match(std::string_view line) const {
  std::vector<std::pair<std::string, double>> found;
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr), pcre2_match_data_free);
  if (!match) return found;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(line.data());
  PCRE2_SIZE start = 0;
  while (start <= line.size()) {
    const int rc = pcre2_match(code_.get(), subject, line.size(), start, 0, match.get(), nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    for (const auto& [number, name] : groups_) {
      if (number >= rc || ovector[2 * number] == PCRE2_UNSET) continue;
      const std::string_view text = line.substr(ovector[2 * number], ovector[2 * number + 1] - ovector[2 * number]);
      const std::optional<double> value = ParseDouble(Trim(text));
      if (value && std::isfinite(*value)) found.emplace_back(name, *value);
    }
    // An empty match must not stall the scan.
    start = ovector[1] > ovector[0] ? ovector[1] : ovector[1] + 1;
  }
  return found;
}

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
