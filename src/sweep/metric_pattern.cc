#define PCRE2_CODE_UNIT_WIDTH 8
#include "sweep/metric_pattern.h"

#include <fmt/format.h>
#include <pcre2.h>

#include <algorithm>
#include <cmath>
#include <optional>

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

}  // namespace sat::sweep
