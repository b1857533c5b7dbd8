#include "cli/options.h"

#include <fmt/core.h>

#include <cmath>

#include "util/range.h"
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
  if (!seconds) return seconds.error();
  return std::optional<double>(*seconds);
}

Result<std::optional<double>> PriceFlag(double price_per_hour) {
  if (price_per_hour == 0) return std::optional<double>();
  if (Status st = CheckInRange("--price-per-hour", price_per_hour, Open(0, 1e6), "money per GPU-hour, e.g. 2.50");
      !st) {
    return st.error();
  }
  return std::optional<double>(price_per_hour);
}

}  // namespace sat::cli
