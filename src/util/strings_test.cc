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

// Limits become nanosecond deadlines: nothing infinite, undefined or beyond a year gets through.
TEST(Strings, ParseDurationIsFiniteAndBounded) {
  for (const char* bad : {"inf", "Infinity", "nan", "1e300", "1e300s", "9000000h", "367d", "-0.5s"}) {
    EXPECT_EQ(ParseDuration(bad), std::nullopt) << bad;
  }
  EXPECT_DOUBLE_EQ(*ParseDuration("8784h"), kMaxDurationS);
  EXPECT_DOUBLE_EQ(*ParseDuration("0"), 0);
  EXPECT_TRUE(IsNoLimit("none"));
  EXPECT_TRUE(IsNoLimit(" None "));
  EXPECT_FALSE(IsNoLimit("0"));
  EXPECT_FALSE(IsNoLimit("inf"));
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
  EXPECT_EQ(FormatPct(0.42), "0.4%");
  EXPECT_EQ(FormatPct(0), "0%");
  EXPECT_EQ(FormatShare(std::numeric_limits<double>::quiet_NaN()), "n/a");
}

// The rules tune's own formatters had (tune/text.h), kept when they moved here.
TEST(Format, TuneNumbersKeepTheirRules) {
  EXPECT_EQ(FormatNumber(1234.5), "1,234");  // round half to even in fmt's fixed formatting
  EXPECT_EQ(FormatNumber(1234567), "1,234,567");
  EXPECT_EQ(FormatNumber(999), "999");
  EXPECT_EQ(FormatNumber(12.34), "12.3");
  EXPECT_EQ(FormatNumber(1.234), "1.23");
  EXPECT_EQ(FormatNumber(-2500), "-2,500");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::quiet_NaN()), "n/a");
  EXPECT_EQ(FormatRate(812), "812 samples/s");
}

TEST(Format, RoundingNeverCarriesIntoAnExtraDigit) {
  EXPECT_EQ(FormatNumber(9.994), "9.99");
  EXPECT_EQ(FormatNumber(9.996), "10.0");
  EXPECT_EQ(FormatNumber(-9.996), "-10.0");
  EXPECT_EQ(FormatNumber(99.94), "99.9");
  EXPECT_EQ(FormatNumber(1999.5), "2,000");
  EXPECT_EQ(FormatTimes(9.996), "10×");
  EXPECT_EQ(FormatShare(0.0096), "1%");
  EXPECT_EQ(FormatBytes(99.96 * 1024), "100 KiB");
}

TEST(Format, BytesTimesPercent) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(2.5 * (1ull << 30)), "2.5 GiB");
  EXPECT_EQ(FormatBytes(300.0 * (1ull << 20)), "300 MiB");
  EXPECT_EQ(FormatBytes(3ull << 30), "3.0 GiB");
  EXPECT_EQ(FormatBytes(312ull << 20), "312 MiB");
  EXPECT_EQ(FormatBytes(20 << 10), "20.0 KiB");
  EXPECT_EQ(FormatBytes(5.0 * (1ull << 40)), "5.0 TiB");
  EXPECT_EQ(FormatTimes(1.6), "1.60×");
  EXPECT_EQ(FormatTimes(12.3), "12×");
  EXPECT_EQ(FormatShare(0.034), "3%");
  EXPECT_EQ(FormatShare(0.0042), "0.4%");
  EXPECT_EQ(FormatShare(0.9), "90%");
}

TEST(Format, Duration) {
  EXPECT_EQ(FormatDuration(42.31), "42.3s");
  EXPECT_EQ(FormatDuration(754), "12m34s");
  EXPECT_EQ(FormatDuration(7500), "2h05m");
}

}  // namespace
}  // namespace sat
