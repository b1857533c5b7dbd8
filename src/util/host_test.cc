#include "util/host.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace sat {
namespace {

TEST(HostName, IsTheKernelsName) {
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  EXPECT_EQ(HostName(), name);
  EXPECT_FALSE(HostName().empty());
}

}  // namespace
}  // namespace sat
