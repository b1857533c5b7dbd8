// Throughput from the output lines of an unmodified training script (`--parse REGEX` or a preset name).
//
// The regular expression (PCRE2, Python-style named groups `(?P<name>...)` work) names what it captures:
//   samples_per_s             samples per second                       -> {t, 1, value}
//   it_per_s                  iterations per second (x batch size)     -> {t, 1, value * batch}
//   step_s, s_per_it          seconds per step (needs the batch size)  -> {t, value, batch}
//   ms_per_step               milliseconds per step (batch size)       -> {t, value / 1000, batch}
//   data_s, data_ms           time of that step spent waiting for data -> the data-wait share only
//   phase_<name>_s, _ms       time of that step spent in a named part   -> that phase's share only
//                             (e.g. phase_metrics_s for per-step metric work)
// The first group in that order that matched a number gives the observation (see estimator.h for how rate and
// step observations are read). Other named groups are allowed and ignored.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/estimator.h"
#include "util/result.h"

struct pcre2_real_code_8;

namespace sat::measure {

struct ParsedLine {
  Observation observation;
  // Share (0..1) of the step spent waiting for data, when the line has data_s or data_ms and the step time is
  // known (a step group, or batch size / rate).
  std::optional<double> data_wait_share;
  // Share (0..1) of the step spent in each named phase (phase_<name>_s groups), when the step time is known.
  std::map<std::string, double> phase_shares;
};

// Immutable after construction and cheap to copy; Parse may be called from several threads at once.
class LineParser {
 public:
  // `spec` is a preset name (PresetNames()) or a regular expression. `batch_size` (samples per step or
  // iteration) is needed unless the expression captures samples_per_s. Errors (exit code 2) carry PCRE2's
  // message and offset for a bad expression, list the usable groups when none is present, suggest the
  // closest name for a misspelt group, and ask for the batch size when it is needed.
  static Result<LineParser> Create(std::string_view spec, std::optional<double> batch_size);

  // "tqdm" (also what Lightning's default bar prints), "lightning" (only its training bar), "keras", and
  // "saturate-example" (the example trainer's "samples/s 840.2 step_s 0.0123 data_s 0.0040").
  static std::vector<std::string> PresetNames();

  // One line of output without its terminator, received at `t` seconds (CLOCK_MONOTONIC). The caller splits
  // output at '\n' and at '\r' (progress bars redraw with '\r'). nullopt when the line does not match or its
  // group does not hold a number.
  std::optional<ParsedLine> Parse(std::string_view line, double t) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct PhaseGroup {
    std::string phase;
    int group;
    double scale;  // to seconds
  };
  LineParser(std::string pattern, std::shared_ptr<const pcre2_real_code_8> code, std::vector<int> groups,
             std::vector<PhaseGroup> phase_groups, std::optional<double> batch_size);

  std::string pattern_;
  std::shared_ptr<const pcre2_real_code_8> code_;  // compiled once; read-only, so copies share it
  std::vector<int> groups_;  // capture group number of each known group name (line_parser.cc), 0 when absent
  std::vector<PhaseGroup> phase_groups_;
  std::optional<double> batch_size_;
};

}  // namespace sat::measure
