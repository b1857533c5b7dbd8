#include "util/strings.h"

#include <gtest/gtest.h>

#include <limits>

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

TEST(Format, NumbersSharesAndMemory) {
  EXPECT_EQ(JoinNonEmpty({"a", "", "b"}, ", "), "a, b");
  EXPECT_EQ(JoinNonEmpty({"", ""}, ", "), "");
  EXPECT_EQ(FormatNumber(1840.2), "1,840");
  EXPECT_EQ(FormatNumber(1234567.0), "1,234,567");
  EXPECT_EQ(FormatNumber(212), "212");
  EXPECT_EQ(FormatNumber(99.96), "100");
  EXPECT_EQ(FormatNumber(42.13), "42.1");
  EXPECT_EQ(FormatNumber(3.421), "3.42");
  EXPECT_EQ(FormatNumber(-2500), "-2,500");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "n/a");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::quiet_NaN()), "n/a");
  EXPECT_EQ(GroupThousands(0), "0");
  EXPECT_EQ(GroupThousands(999), "999");
  EXPECT_EQ(GroupThousands(1000), "1,000");
  EXPECT_EQ(FormatShare(0.712), "71%");
  EXPECT_EQ(FormatShare(1), "100%");
  EXPECT_EQ(FormatPct(37.5), "38%");
  EXPECT_EQ(FormatPct(110), "110%");
  EXPECT_EQ(FormatGiB(10952166604.0), "10.2 GiB");
}

}  // namespace
}  // namespace sat
