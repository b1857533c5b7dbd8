#include "util/range.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sat {
namespace {

TEST(Interval, EndsOpenOrClosed) {
  EXPECT_TRUE(Closed(0, 1).Contains(0));
  EXPECT_TRUE(Closed(0, 1).Contains(1));
  EXPECT_FALSE(Open(0, 1).Contains(0));
  EXPECT_FALSE(Open(0, 1).Contains(1));
  EXPECT_TRUE(Open(0, 1).Contains(0.5));
  EXPECT_FALSE(LeftOpen(0, 1).Contains(0));
  EXPECT_TRUE(LeftOpen(0, 1).Contains(1));
  EXPECT_TRUE(RightOpen(0, 1).Contains(0));
  EXPECT_FALSE(RightOpen(0, 1).Contains(1));
  EXPECT_TRUE(AtLeast(1).Contains(1));
  EXPECT_FALSE(AtLeast(1).Contains(0.999));
  EXPECT_FALSE(Above(0).Contains(0));
  EXPECT_TRUE(Above(0).Contains(1e-300));
}

TEST(Interval, NeverContainsNanOrInfinity) {
  EXPECT_FALSE(Interval{}.Contains(std::nan("")));
  EXPECT_FALSE(AtLeast(0).Contains(INFINITY));
  EXPECT_FALSE(Interval{}.Contains(-INFINITY));
  EXPECT_TRUE(Interval{}.Contains(-1e300));
}

TEST(Interval, SaysItselfInWords) {
  EXPECT_EQ(Above(0).Text(), "positive");
  EXPECT_EQ(AtLeast(0).Text(), "at least 0");
  EXPECT_EQ(AtLeast(1).Text(), "at least 1");
  EXPECT_EQ(Above(2.5).Text(), "above 2.5");
  EXPECT_EQ(Interval{.hi = 8}.Text(), "at most 8");
  EXPECT_EQ((Interval{.hi = 8, .hi_open = true}).Text(), "below 8");
  EXPECT_EQ(RightOpen(0, 1).Text(), "in [0, 1)");
  EXPECT_EQ(LeftOpen(0, 1).Text(), "in (0, 1]");
  EXPECT_EQ(Open(0, 1).Text(), "in (0, 1)");
  EXPECT_EQ(Interval{}.Text(), "a number");
}

TEST(CheckInRange, NamesTheInputTheValueAndTheRange) {
  EXPECT_TRUE(CheckInRange("--target", 0.03, Open(0, 1)));
  Status s = CheckInRange("--target", 2, Open(0, 1), "0.03 = ±3%");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "--target 2 must be in (0, 1) (0.03 = ±3%)");
  EXPECT_EQ(s.error().exit_code, kExitUsage);
  EXPECT_EQ(CheckInRange("--samples-per-step", -4, Above(0)).message(), "--samples-per-step -4 must be positive");
  EXPECT_EQ(CheckInRange("minimum gain", std::nan(""), Interval{}).message(), "minimum gain nan must be a number");
}

TEST(CheckAllInRange, TheFirstFailureWins) {
  EXPECT_TRUE(CheckAllInRange({{"a", 1, Above(0)}, {"b", 0, AtLeast(0)}}));
  Status s = CheckAllInRange({{"a", 1, Above(0)}, {"b", -1, AtLeast(0), "why"}, {"c", -1, Above(0)}}, "run 3: ");
  EXPECT_EQ(s.message(), "run 3: b -1 must be at least 0 (why)");
}

}  // namespace
}  // namespace sat
