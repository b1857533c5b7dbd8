#include "util/strings.h"

#include <gtest/gtest.h>

namespace sat {
namespace {

TEST(Strings, SplitKeepsEmptyFields) {
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string>{""}));
}

TEST(Strings, ClosestMatchFindsTypos) {
  std::vector<std::string> names = {"utilization.gpu", "memory.used", "temperature.gpu"};
  EXPECT_EQ(ClosestMatch("utilisation.gpu", names), "utilization.gpu");
  EXPECT_EQ(ClosestMatch("memory.usd", names), "memory.used");
  EXPECT_EQ(ClosestMatch("completely-different-thing", names), std::nullopt);
}

TEST(Strings, ParseNumbersRejectJunk) {
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("1.5x"), std::nullopt);
  EXPECT_EQ(ParseInt("42"), 42);
  EXPECT_EQ(ParseInt("4 2"), std::nullopt);
  EXPECT_EQ(ParseInt(""), std::nullopt);
}

TEST(Strings, ParseDurationUnits) {
  EXPECT_DOUBLE_EQ(*ParseDuration("90"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("2m"), 120);
  EXPECT_DOUBLE_EQ(*ParseDuration("1m30s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("1500ms"), 1.5);
  EXPECT_EQ(ParseDuration("2 parsecs"), std::nullopt);
  EXPECT_EQ(ParseDuration("-1"), std::nullopt);
}

}  // namespace
}  // namespace sat
