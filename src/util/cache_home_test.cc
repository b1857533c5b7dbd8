#include "util/cache_home.h"

#include <gtest/gtest.h>

namespace sat {
namespace {

TEST(SaturateCacheDir, XdgThenHomeThenThePasswordDatabaseNeverAShare) {
  EXPECT_EQ(*SaturateCacheDir({"/x/cache", "/home/me", "/home/pw"}), "/x/cache/saturate");
  EXPECT_EQ(*SaturateCacheDir({"relative/cache", "/home/me", "/home/pw"}), "/home/me/.cache/saturate");
  EXPECT_EQ(*SaturateCacheDir({"", "", "/home/pw"}), "/home/pw/.cache/saturate");
  EXPECT_FALSE(SaturateCacheDir({"", "", ""}));
}

}  // namespace
}  // namespace sat
