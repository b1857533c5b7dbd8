#include "monitor/format.h"

#include <gtest/gtest.h>

namespace sat::monitor {
namespace {

TEST(ParseFormat, CsvWithOptionsInAnyOrder) {
  Result<Format> plain = ParseFormat("csv");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->kind, OutputKind::kCsv);
  EXPECT_TRUE(plain->header);
  EXPECT_TRUE(plain->units);

  Result<Format> bare = ParseFormat("csv,noheader,nounits");
  ASSERT_TRUE(bare);
  EXPECT_FALSE(bare->header);
  EXPECT_FALSE(bare->units);

  // nvidia-smi accepts the options in any order; scripts in the wild pass "noheader,csv,nounits".
  Result<Format> reordered = ParseFormat("noheader, csv");
  ASSERT_TRUE(reordered);
  EXPECT_EQ(reordered->kind, OutputKind::kCsv);
  EXPECT_FALSE(reordered->header);
  EXPECT_TRUE(reordered->units);
}

TEST(ParseFormat, Json) {
  Result<Format> json = ParseFormat("json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->kind, OutputKind::kJson);
}

TEST(ParseFormat, UnknownOptionSuggestsTheClosest) {
  Result<Format> f = ParseFormat("csv,nohead");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message, "unknown --format option 'nohead'; did you mean 'noheader'?");
  EXPECT_EQ(f.error().exit_code, kExitUsage);

  Result<Format> xml = ParseFormat("xml");
  ASSERT_FALSE(xml);
  EXPECT_EQ(xml.error().message, "unknown --format option 'xml'");
}

TEST(ParseFormat, BadCombinationsAreUsageErrors) {
  for (const char* spec : {"", "csv,json", "nounits", "json,nounits", "json,noheader", "csv,,nounits"}) {
    Result<Format> f = ParseFormat(spec);
    EXPECT_FALSE(f) << spec;
    if (!f) {
      EXPECT_EQ(f.error().exit_code, kExitUsage) << spec;
    }
  }
  EXPECT_EQ(ParseFormat("csv,json").error().message, "--format takes csv or json, not both");
  EXPECT_EQ(ParseFormat("json,nounits").error().message, "noheader and nounits apply to --format=csv only");
}

}  // namespace
}  // namespace sat::monitor
