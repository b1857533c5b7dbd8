#include "cli/options.h"

#include <gtest/gtest.h>

namespace sat::cli {
namespace {

TEST(DurationFlag, ReadsEveryUnitAtOrAboveTheLeast) {
  EXPECT_EQ(*DurationFlag("--budget", "20s", 20), 20);
  EXPECT_EQ(*DurationFlag("--budget", "1h30m", 20), 5400);
  EXPECT_EQ(*DurationFlag("--warmup", "500ms", 0, Least::kExcluded), 0.5);
  EXPECT_EQ(*DurationFlag("--timeout", "0", 0), 0);
}

TEST(DurationFlag, NamesTheFlagTheTextAndTheLeast) {
  auto short_budget = DurationFlag("--budget", "5s", 20);
  ASSERT_FALSE(short_budget);
  EXPECT_EQ(short_budget.error().exit_code, kExitUsage);
  EXPECT_EQ(short_budget.error().message,
            "--budget '5s' is not a duration of at least 20s and at most 366 days (e.g. 500ms, 90s, 10m, 1h30m)");
  EXPECT_EQ(DurationFlag("--warmup", "0", 0, Least::kExcluded).error().message,
            "--warmup '0' is not a duration above 0s and at most 366 days (e.g. 500ms, 90s, 10m, 1h30m)");
  EXPECT_FALSE(DurationFlag("--budget", "2x", 20));
  EXPECT_FALSE(DurationFlag("--budget", "inf", 20));
  EXPECT_FALSE(DurationFlag("--budget", "", 0));
}

// A huge limit would overflow the runner's nanosecond deadline, so every attempt would time out at once.
TEST(DurationFlag, RefusesWhatNoClockCanHold) {
  EXPECT_EQ(DurationFlag("--timeout", "1e300", 0, Least::kExcluded).error().message,
            "--timeout '1e300' is not a duration above 0s and at most 366 days (e.g. 500ms, 90s, 10m, 1h30m)");
  EXPECT_FALSE(DurationFlag("--timeout", "100000000h", 0));
  EXPECT_FALSE(DurationFlag("--timeout", "nan", 0));
}

TEST(OptionalDurationFlag, EmptyIsLeftOut) {
  EXPECT_EQ(*OptionalDurationFlag("--trial-budget", "", 6), std::nullopt);
  EXPECT_EQ(*OptionalDurationFlag("--trial-budget", "8s", 6), 8);
  EXPECT_EQ(OptionalDurationFlag("--trial-budget", "5s", 6).error().message,
            "--trial-budget '5s' is not a duration of at least 6s and at most 366 days (e.g. 500ms, 90s, 10m, 1h30m)");
}

}  // namespace
}  // namespace sat::cli
