#include "tune/levels.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

using V = std::vector<int64_t>;

TEST(Levels, Doubling) {
  EXPECT_EQ(DoublingLevels(0, 8), (V{0, 1, 2, 4, 8}));
  EXPECT_EQ(DoublingLevels(0, 6), (V{0, 1, 2, 4, 6}));
  EXPECT_EQ(DoublingLevels(3, 12), (V{3, 4, 8, 12}));
  EXPECT_EQ(DoublingLevels(16, 1024), (V{16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(DoublingLevels(5, 5), (V{5}));
}

TEST(Levels, Spread) {
  EXPECT_EQ(SpreadLevels(1, 16, 5), (V{1, 2, 4, 8, 16}));
  EXPECT_EQ(SpreadLevels(0, 8, 5), (V{0, 2, 4, 6, 8}));
  EXPECT_EQ(SpreadLevels(1, 3, 5), (V{1, 2, 3}));
  EXPECT_EQ(SpreadLevels(7, 7, 5), (V{7}));
}

TEST(Levels, Grid) {
  KnobSpec batch = *DefaultKnob("batch_size", {2, false});
  batch.hi = 64;
  EXPECT_EQ(GridLevels(batch).size(), 3u);  // 16 32 64
  KnobSpec workers = *DefaultKnob("workers", {2, false});
  EXPECT_EQ(GridLevels(workers), (std::vector<KnobValue>{0, 1, 2}));
  workers.hi = 32;
  EXPECT_EQ(GridLevels(workers).size(), 7u);  // 0 1 2 4 8 16 32
  KnobSpec amp = *DefaultKnob("amp", {2, true});
  EXPECT_EQ(GridLevels(amp), (std::vector<KnobValue>{"off", "bf16", "fp16"}));
}

TEST(Levels, BisectMidpoint) {
  EXPECT_EQ(BisectMidpoint(64, 128, 1), 96);
  EXPECT_EQ(BisectMidpoint(96, 97, 1), std::nullopt);
  EXPECT_EQ(BisectMidpoint(96, 98, 1), 97);
  EXPECT_EQ(BisectMidpoint(288, 304, 8), 296);
  EXPECT_EQ(BisectMidpoint(296, 304, 8), std::nullopt);
  EXPECT_EQ(BisectMidpoint(4, 20, 8), 8);  // rounded down to 8... still above 4
  EXPECT_EQ(BisectMidpoint(9, 15, 8), std::nullopt);  // no multiple of 8 strictly inside
}

TEST(Levels, Picks) {
  std::vector<Point> pts = {{64, 900}, {128, 980}, {256, 1000}, {512, 995}};
  EXPECT_EQ(Fastest(pts), 256);
  EXPECT_EQ(SmallestWithin(pts, 0.03), 128);
  EXPECT_EQ(SmallestWithin(pts, 0.0), 256);
  EXPECT_EQ(SmallestWithin(pts, 0.2), 64);
  EXPECT_EQ(Fastest({{8, 5}, {4, 5}}), 4);
  EXPECT_EQ(Fastest({}), std::nullopt);
  EXPECT_EQ(SmallestWithin({}, 0.03), std::nullopt);
}

}  // namespace
}  // namespace sat::tune
