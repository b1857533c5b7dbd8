#include "cli/options.h"

#include <fmt/core.h>

#include <cmath>

#include "util/strings.h"

namespace sat::cli {

Result<double> DurationFlag(std::string_view flag, std::string_view text, double min_s, Least least) {
  const std::optional<double> seconds = ParseDuration(text);
  const bool enough =
      seconds && std::isfinite(*seconds) && (least == Least::kIncluded ? *seconds >= min_s : *seconds > min_s);
  if (enough) return *seconds;
  return UsageError(fmt::format("{} '{}' is not a duration {} {:g}s and at most 366 days (e.g. 500ms, 90s, 10m, "
                                "1h30m)", flag, text, least == Least::kIncluded ? "of at least" : "above", min_s));
}

Result<std::optional<double>> OptionalDurationFlag(std::string_view flag, std::string_view text, double min_s,
                                                   Least least) {
  if (text.empty()) return std::optional<double>();
  auto seconds = DurationFlag(flag, text, min_s, least);
  if (!seconds.ok()) return seconds.error();
  return std::optional<double>(*seconds);
}

}  // namespace sat::cli
