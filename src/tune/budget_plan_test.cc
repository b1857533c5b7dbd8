#include "tune/budget_plan.h"

#include <gtest/gtest.h>

#include <limits>

namespace sat::tune {
namespace {

TEST(BudgetPlan, CountsWholeTrials) {
  EXPECT_EQ(TrialsHeld(300, 20), 15);
  EXPECT_EQ(TrialsHeld(299, 20), 14);
  EXPECT_EQ(TrialsHeld(10, 20), 0);
  EXPECT_EQ(TrialsHeld(-5, 20), 0);
  EXPECT_EQ(TrialsHeld(300, 0), 0);
  EXPECT_EQ(TrialsHeld(std::numeric_limits<double>::infinity(), 20), 0);
  EXPECT_EQ(TrialsHeld(300, std::numeric_limits<double>::quiet_NaN()), 0);
}

TEST(BudgetPlan, FirstTrialsComeFirstThenTheRestByWeight) {
  const std::vector<StepNeed> needs = {{"workers", 1, 1}, {"amp", 1, 0.5}, {"batch", 1, 2}, {"full", 3, 0.5},
                                       {"confirm", 1, 0}};
  // 12 trials: 7 first ones, 5 to share by 1 : 0.5 : 2 : 0.5 (1.25, 0.625, 2.5, 0.625 -> 1, 1, 2, 1).
  auto shares = ShareTrials(12, needs);
  ASSERT_EQ(shares.size(), 5u);
  EXPECT_EQ(shares[0].first, 1);
  EXPECT_EQ(shares[0].more, 1);
  EXPECT_EQ(shares[1].more, 1);
  EXPECT_EQ(shares[2].more, 2);
  EXPECT_EQ(shares[3].first, 3);
  EXPECT_EQ(shares[3].more, 1);
  EXPECT_EQ(shares[4].more, 0);
  int total = 0;
  for (const auto& s : shares) total += s.first + s.more;
  EXPECT_EQ(total, 12);
  EXPECT_EQ(PlanText(12, 19.6, shares),
            "about 12 trials of ~20s: workers 1-2, amp 1-2, batch 1-3, full training 3-4, confirm 1");
}

TEST(BudgetPlan, TooFewTrialsGoToTheEarlierStepsFirst) {
  const std::vector<StepNeed> needs = {{"workers", 1, 1}, {"batch", 1, 2}, {"full", 3, 0}, {"confirm", 1, 0}};
  auto shares = ShareTrials(3, needs);
  EXPECT_EQ(shares[0].first, 1);
  EXPECT_EQ(shares[1].first, 1);
  EXPECT_EQ(shares[2].first, 1);
  EXPECT_EQ(shares[3].first, 0);
  for (const auto& s : shares) EXPECT_EQ(s.more, 0);
  EXPECT_EQ(PlanText(3, 20, shares), "about 3 trials of ~20s: workers 1, batch 1, full training 1");
  for (const auto& s : ShareTrials(-4, needs)) EXPECT_EQ(s.first + s.more, 0);
  EXPECT_EQ(PlanText(0, 20, ShareTrials(0, needs)), "about 0 trials of ~20s: none");
}

TEST(BudgetPlan, NoWeightsLeaveTheRestUnshared) {
  auto shares = ShareTrials(10, {{"amp", 2, 0}, {"confirm", 1, 0}});
  EXPECT_EQ(shares[0].first + shares[0].more + shares[1].first + shares[1].more, 3);
}

}  // namespace
}  // namespace sat::tune
