#include "sweep/launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "measure/helper_env.h"

namespace sat::sweep {

void MatchedLines::Push(std::vector<std::pair<std::string, double>> values, double time_unix) {
  std::lock_guard lock(mu_);
  for (auto& [name, value] : values) points_.push_back(MetricPoint{std::move(name), value, std::nullopt, time_unix});
}

std::vector<MetricPoint> MatchedLines::Take() {
  std::lock_guard lock(mu_);
  return std::exchange(points_, {});
}

run::RunSpec LaunchSpec(const Launch& launch) {
  run::RunSpec rs;
  rs.argv = launch.argv;
  rs.env = launch.env;
  measure::HelperEnv helper;
  helper.channel_path = launch.channel_path;
  helper.run_id = launch.run_id;
  if (!launch.auto_instrumentation) helper.auto_instrument = false;
  // Enough reports per window to judge rates by, and no more: every run shares one socket.
  helper.report_interval_s = std::clamp(launch.window_s / 6, 0.05, 0.25);
  measure::ApplyHelperEnv(helper, rs);
  rs.log_dir = launch.log_dir;
  rs.time_limit_s = launch.time_limit_s;
  rs.stop_grace_s = launch.stop_grace_s;
  rs.term_grace_s = 5;
  if (launch.pattern != nullptr && launch.lines) {
    rs.on_line = [pattern = *launch.pattern, lines = launch.lines](run::Stream, std::string_view line) {
      auto found = pattern.Match(line);
      if (!found.empty()) lines->Push(std::move(found), NowUnix());
    };
  }
  return rs;
}

}  // namespace sat::sweep
