// A sweep's `saturate.metric_pattern`, compiled: how a run's output lines become metric values. Apart from the
// metric log (sweep/metrics.h) so that the spec's parser checks a pattern without reading what runs record.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

struct pcre2_real_code_8;

namespace sat::sweep {

// A compiled metric pattern (PCRE2, Python-style `(?P<name>...)` groups). Immutable and cheap to copy; Match
// may be called from several threads at once (each call has its own match data).
class MetricPattern {
 public:
  // Usage error for an expression PCRE2 rejects or one without named groups; `what` names the pattern in it
  // ("'metric_pattern'" -> "'metric_pattern' is not a valid regular expression: ... at offset 7").
  static Result<MetricPattern> Create(const std::string& pattern, std::string_view what);

  // The named groups, in pattern order.
  std::vector<std::string> names() const;

  // Every (group name, value) that matched a finite number in `line`, over all matches of the pattern in the
  // line, in order. Groups that did not take part in a match, or hold no number, are skipped.
  std::vector<std::pair<std::string, double>> Match(std::string_view line) const;

 private:
  MetricPattern(std::shared_ptr<const pcre2_real_code_8> code, std::vector<std::pair<int, std::string>> groups);
  std::shared_ptr<const pcre2_real_code_8> code_;
  std::vector<std::pair<int, std::string>> groups_;  // (group number, name)
};

}  // namespace sat::sweep
