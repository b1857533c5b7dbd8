#include "util/spans.h"

#include <gtest/gtest.h>

namespace sat {
namespace {

TEST(UnionLength, OverlapsCountOnceAndEmptySpansNothing) {
  EXPECT_EQ(UnionLength({}), 0);
  EXPECT_DOUBLE_EQ(UnionLength({{0, 2}, {1, 3}, {5, 6}, {5.5, 5.7}, {8, 8}, {9, 7}}), 3 + 1);
  EXPECT_DOUBLE_EQ(UnionLength({{4, 6}, {0, 1}, {1, 2}}), 4);  // unsorted; touching spans join
}

}  // namespace
}  // namespace sat
