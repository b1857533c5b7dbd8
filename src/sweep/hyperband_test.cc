#include "sweep/hyperband.h"

#include <gtest/gtest.h>

#include <limits>

namespace sat::sweep {
namespace {

TEST(HyperbandTest, BandsOfWandbDocumentedExamples) {
  // W&B's docs: min_iter 3 (eta 3) gives brackets 3, 9, 27, 81, ...; max_iter 27, s 2 gives 9 and 3.
  auto from_min = HyperbandBands(HyperbandSpec{3, std::nullopt, 0, 3, false});
  ASSERT_TRUE(from_min);
  ASSERT_GE(from_min->size(), 4u);
  EXPECT_EQ(std::vector<int64_t>(from_min->begin(), from_min->begin() + 4), (std::vector<int64_t>{3, 9, 27, 81}));
  EXPECT_LE(from_min->back(), kMaxBand);
  auto from_max = HyperbandBands(HyperbandSpec{std::nullopt, 27, 2, 3, false});
  ASSERT_TRUE(from_max);
  EXPECT_EQ(*from_max, (std::vector<int64_t>{3, 9}));
  // max_iter 5, eta 2, s 2 (the example of W&B's hyperband_stop_runs): 5/2 = 2.5 -> 2, 5/4 -> 1.
  EXPECT_EQ(*HyperbandBands(HyperbandSpec{std::nullopt, 5, 2, 2, false}), (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(HyperbandBands(HyperbandSpec{std::nullopt, 2, 2, 3, false}));
}

TEST(HyperbandTest, StopsWhatWandbsExampleStops) {
  // W&B's hyperband_stop_runs example: five runs, loss minimised, max_iter 5, eta 2, s 2.
  const std::vector<int64_t> bands = {1, 2};
  const std::vector<std::vector<double>> h = {{10, 9}, {10, 10}, {10, 8, 8}, {10, 7, 7}, {10, 6, 6}};
  const auto thresholds = HyperbandThresholds(bands, 2, h, false);
  // Band 1: all 10; band 2: sorted 6 7 8 9 10, index int(0.5 * 5) = 2 -> 8.
  EXPECT_EQ(thresholds, (std::vector<double>{10, 8}));
  auto b = HyperbandJudge(bands, thresholds, h[1], false, false);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->stop);
  EXPECT_EQ(b->band, 2);
  EXPECT_EQ(b->value, 10);
  EXPECT_EQ(b->threshold, 8);
  EXPECT_FALSE(HyperbandJudge(bands, thresholds, h[2], false, false)->stop);  // 8 is not above 8
  EXPECT_FALSE(HyperbandJudge(bands, thresholds, h[3], false, false)->stop);
}

TEST(HyperbandTest, MinIterExampleOfWandbsTests) {
  // W&B's test_hyperband_min_iter_bands: min_iter 3, eta 3; a flat run of 4 values and one falling from 10.
  auto bands = *HyperbandBands(HyperbandSpec{3, std::nullopt, 0, 3, false});
  std::vector<double> flat(4, 10), falling;
  for (int i = 0; i < 10; ++i) falling.push_back(10 - i);
  const auto thresholds = HyperbandThresholds(bands, 3, {flat, falling}, false);
  // Band 3: values 10 and 8, index int(2 / 3) = 0 -> 8; band 9: only 2.
  EXPECT_EQ(thresholds[0], 8);
  EXPECT_EQ(thresholds[1], 2);
  EXPECT_TRUE(HyperbandJudge(bands, thresholds, flat, false, false)->stop);
  EXPECT_FALSE(HyperbandJudge(bands, thresholds, falling, false, false)->stop);
}

TEST(HyperbandTest, MaximiseAndStrict) {
  const std::vector<int64_t> bands = {2};
  const std::vector<std::vector<double>> h = {{0.5, 0.9}, {0.6, 0.4}, {0.1, 0.2}};
  const auto thresholds = HyperbandThresholds(bands, 3, h, true);
  // At iteration 2, negated and sorted: -0.9, -0.4, -0.2; index int(3 / 3) = 1.
  EXPECT_EQ(thresholds[0], -0.4);
  auto behind = HyperbandJudge(bands, thresholds, h[2], true, false);
  EXPECT_TRUE(behind->stop);  // its best accuracy, 0.2, is below 0.4
  EXPECT_EQ(behind->value, 0.2);
  EXPECT_EQ(behind->threshold, 0.4);
  EXPECT_FALSE(HyperbandJudge(bands, thresholds, h[1], true, false)->stop);
  // Strict compares the value at the band, not the best so far.
  const std::vector<double> fell = {0.95, 0.3};
  EXPECT_FALSE(HyperbandJudge(bands, thresholds, fell, true, false)->stop);
  EXPECT_TRUE(HyperbandJudge(bands, thresholds, fell, true, true)->stop);
  EXPECT_FALSE(HyperbandJudge(bands, thresholds, {0.3}, true, false).has_value());
  EXPECT_EQ(HyperbandThresholds({5}, 3, h, false)[0], std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace sat::sweep
