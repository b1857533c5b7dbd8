#include "tune/text.h"

#include <gtest/gtest.h>

#include <limits>

namespace sat::tune {
namespace {

TEST(Text, Numbers) {
  EXPECT_EQ(Number(1234.5), "1,234");  // round half to even in fmt's fixed formatting
  EXPECT_EQ(Number(1234567), "1,234,567");
  EXPECT_EQ(Number(999), "999");
  EXPECT_EQ(Number(12.34), "12.3");
  EXPECT_EQ(Number(1.234), "1.23");
  EXPECT_EQ(Number(-2500), "-2,500");
  EXPECT_EQ(Number(std::numeric_limits<double>::quiet_NaN()), "n/a");
  EXPECT_EQ(Rate(812), "812 samples/s");
}

TEST(Text, BytesTimesPercent) {
  EXPECT_EQ(Bytes(512), "512 B");
  EXPECT_EQ(Bytes(1536), "1.5 KiB");
  EXPECT_EQ(Bytes(2.5 * (1ull << 30)), "2.5 GiB");
  EXPECT_EQ(Bytes(300.0 * (1ull << 20)), "300 MiB");
  EXPECT_EQ(Times(1.6), "1.60×");
  EXPECT_EQ(Times(12.3), "12×");
  EXPECT_EQ(Percent(0.034), "3%");
  EXPECT_EQ(Percent(0.0042), "0.4%");
  EXPECT_EQ(Percent(0.9), "90%");
}

}  // namespace
}  // namespace sat::tune
