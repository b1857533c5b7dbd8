#include "util/bytes.h"

#include <gtest/gtest.h>

namespace sat {
namespace {

TEST(Bytes, ParseBytesUnits) {
  EXPECT_EQ(*ParseBytes("1048576"), 1048576u);
  EXPECT_EQ(*ParseBytes("512K"), 512u * 1024);
  EXPECT_EQ(*ParseBytes("200MiB"), 200ull << 20);
  EXPECT_EQ(*ParseBytes("200MB"), 200ull << 20);
  EXPECT_EQ(*ParseBytes("1.5G"), 3ull << 29);
  EXPECT_EQ(*ParseBytes(" 2 TiB "), 2ull << 40);
  EXPECT_EQ(*ParseBytes("7b"), 7u);
  for (const char* bad : {"", "G", "-1G", "1X", "1GiBs", "1e3", "inf", "nan", "99999999P", "1..5G"}) {
    EXPECT_FALSE(ParseBytes(bad)) << bad;
  }
}

}  // namespace
}  // namespace sat
