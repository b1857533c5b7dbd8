#include "sweep/launch.h"

#include <algorithm>
#include <optional>

namespace sat::sweep {

measure::InstrumentedLaunch LaunchSpec(const Launch& launch) {
  measure::InstrumentedLaunch out;
  run::RunSpec& rs = out.spec;
  rs.argv = launch.argv;
  rs.env = launch.env;
  if (!launch.auto_instrumentation) out.helper.auto_instrument = false;
  // Enough reports per window to judge rates by, and no more: every run shares one socket.
  out.helper.report_interval_s = std::clamp(launch.window_s / 6, 0.05, 0.25);
  rs.log_dir = launch.log_dir;
  rs.time_limit_s = launch.time_limit_s;
  rs.stop_grace_s = launch.stop_grace_s;
  rs.term_grace_s = 5;
  if (launch.pattern != nullptr && launch.lines) {
    rs.on_line = [pattern = *launch.pattern, lines = launch.lines](run::Stream, std::string_view line) {
      auto found = pattern.Match(line);
      if (found.empty()) return;
      const double now = NowUnix();
      for (auto& [name, value] : found) lines->Push(MetricPoint{std::move(name), value, std::nullopt, now});
    };
  }
  return out;
}

}  // namespace sat::sweep
