// Values that several commands read from their flags the same way. A bad value is a usage error (exit code 2)
// that names the flag, repeats what was given and says what is wanted.
#pragma once

#include <optional>
#include <string_view>

#include "util/result.h"

namespace sat::cli {

// Whether a duration's least value is allowed itself (a budget of exactly 20s) or only what lies above it.
enum class Least { kIncluded, kExcluded };

// The seconds of a duration flag ("90", "90s", "1500ms", "10m", "1h30m"; util's ParseDuration) that is at least
// `min_s` (or above it): "--budget '5s' is not a duration of at least 20s (e.g. 500ms, 90s, 10m, 1h30m)".
Result<double> DurationFlag(std::string_view flag, std::string_view text, double min_s,
                            Least least = Least::kIncluded);

// The same for a flag that may be left out: nullopt when `text` is empty.
Result<std::optional<double>> OptionalDurationFlag(std::string_view flag, std::string_view text, double min_s,
                                                   Least least = Least::kIncluded);

// --price-per-hour (probe, tune): 0 stands for not given (nullopt); else money per GPU-hour above 0 and below a
// million: "--price-per-hour -1 is not in (0, 1000000): money per GPU-hour, e.g. 2.50".
Result<std::optional<double>> PriceFlag(double price_per_hour);

}  // namespace sat::cli
