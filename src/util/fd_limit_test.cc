#include "util/fd_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace sat {
namespace {

TEST(RaiseDescriptorLimit, LiftsTheSoftLimitToTheHardOne) {
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  if (old.rlim_max == RLIM_INFINITY || old.rlim_max < 128) GTEST_SKIP() << "hard limit " << old.rlim_max;
  rlimit low = old;
  low.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_EQ(DescriptorLimit(), 64u);
  EXPECT_EQ(RaiseDescriptorLimit(), static_cast<size_t>(old.rlim_max));
  EXPECT_EQ(DescriptorLimit(), static_cast<size_t>(old.rlim_max));
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
}

}  // namespace
}  // namespace sat
