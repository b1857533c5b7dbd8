// Step 6 of the guided search (search.h): the confirmation of the recommendation, what it may claim against the
// baseline, and what it does when the two readings disagree with what the search measured.
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tune/compare.h"
#include "tune/search.h"
#include "tune/test_model.h"
#include "tune/test_search.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;

TEST(Search, ClaimsASpeedUpOnlyWhenTheConfirmationIsDistinguishable) {
  ScriptModel model;
  model.unsettled = [](const TrialRequest& r) { return r.repeat >= 1; };  // the confirmation, run again too
  SearchOutcome s = Search(model, Options());
  std::string confirm = DecisionOf(s, "confirm");
  EXPECT_THAT(confirm, HasSubstr("not distinguishable from the baseline"));
  EXPECT_THAT(confirm, HasSubstr("no speed-up can be claimed"));
  EXPECT_THAT(confirm, Not(HasSubstr("×")));

  ScriptModel apart;
  EXPECT_THAT(DecisionOf(Search(apart, Options()), "confirm"), HasSubstr("6.40× the baseline's"));
}

TEST(Search, AConfirmationSlowerThanTheBaselineKeepsTheScriptsSettings) {
  ScriptModel model;
  SearchOutcome s = RunSearch(Options(), [&](int id, const TrialRequest& r) -> std::optional<Trial> {
    Trial t = model(id, r);
    if (r.repeat == 1 && r.knobs != model.defaults) {  // the tuned settings, measured again, turn out slow
      t.samples_per_s = 100;
      t.ci_low = 99;
      t.ci_high = 101;
    }
    return t;
  });
  EXPECT_EQ(s.recommended, s.baseline);
  // The baseline was measured again right after the confirmation, and the verdict rests on that reading.
  ASSERT_TRUE(s.baseline_again_trial.has_value());
  EXPECT_EQ(s.confirm_trial, s.baseline_again_trial);
  EXPECT_EQ(s.FindTrial(s.baseline_again_trial)->request.knobs, s.baseline);
  EXPECT_THAT(DecisionOf(s, "confirm"), HasSubstr("trained slower than the baseline"));
  EXPECT_THAT(s.warnings.back(), HasSubstr("confirmed slower than the script's own"));
}

// The machine slows by 2.5x as the confirmation starts (docs/benchmarks.md, tune run 7: the same command read 751,
// 878 and 1,942 samples/s minutes apart). Compared with the baseline read at the start, the recommendation trains
// slower and the search used to fall back to the script's own settings (1.00x); the baseline measured again right
// after reads as slow, and the recommendation stands on the two readings taken back to back.
TEST(Search, AConfirmationSlowerBecauseTheMachineSlowedKeepsTheRecommendation) {
  ScriptModel model;
  bool slow = false;
  SearchOutcome s = RunSearch(Options(), [&](int id, const TrialRequest& r) -> std::optional<Trial> {
    Trial t = model(id, r);
    slow = slow || r.step == "confirm";
    if (slow) {
      t.samples_per_s /= 2.5;
      t.ci_low /= 2.5;
      t.ci_high /= 2.5;
    }
    return t;
  });
  EXPECT_NE(s.recommended, s.baseline);
  ASSERT_TRUE(s.baseline_again_trial.has_value());
  const Trial& confirm = *s.FindTrial(s.confirm_trial);
  const Trial& again = *s.FindTrial(s.baseline_again_trial);
  EXPECT_EQ(confirm.request.knobs, s.recommended);
  EXPECT_EQ(again.id, confirm.id + 1) << "back to back";
  EXPECT_EQ(again.request.knobs, s.baseline);
  EXPECT_EQ(s.ClaimBase(), &again);
  EXPECT_THAT(DecisionOf(s, "confirm"), HasSubstr("The baseline, measured again right after the confirmation"));
  EXPECT_THAT(DecisionOf(s, "confirm"), HasSubstr("Confirmed: the recommendation"));
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_THAT(s.warnings.back(), HasSubstr("this machine's speed moved"));
  for (const auto& w : s.warnings) EXPECT_THAT(w, Not(HasSubstr("keep its settings")));
}

// The machine speeds up 2.5x as the confirmation starts: the confirmation reads far faster than the full step's
// reading of the same settings, and against the baseline of the start it would claim 2.5x too much. The baseline is
// measured again right after, and the speed-up is claimed against that reading.
TEST(Search, AMachineThatSpedUpDuringTheSearchClaimsTheSpeedUpAgainstABaselineReadBackToBack) {
  ScriptModel model;
  bool fast = false;
  std::map<int, double> unscaled;
  SearchOutcome s = RunSearch(Options(), [&](int id, const TrialRequest& r) -> std::optional<Trial> {
    Trial t = model(id, r);
    unscaled[id] = t.samples_per_s;
    fast = fast || r.step == "confirm";
    if (fast) {
      t.samples_per_s *= 2.5;
      t.ci_low *= 2.5;
      t.ci_high *= 2.5;
    }
    return t;
  });
  ASSERT_TRUE(s.baseline_again_trial.has_value());
  const Trial& confirm = *s.FindTrial(s.confirm_trial);
  ASSERT_EQ(s.ClaimBase(), s.FindTrial(s.baseline_again_trial));
  const double claimed = confirm.samples_per_s / s.ClaimBase()->samples_per_s;
  EXPECT_NEAR(claimed, unscaled[confirm.id] / unscaled[*s.baseline_trial], 1e-9);
  EXPECT_THAT(s.warnings.back(), HasSubstr("this machine's speed moved"));
  // A steady machine runs no baseline again.
  EXPECT_FALSE(Search(model, Options()).baseline_again_trial.has_value());
}

// The first confirmation of the recommendation comes out slow (a disturbed run); the best other configuration
// measured in full training is confirmed in its place instead of giving up on the search.
TEST(Search, AConfirmationSlowerThanTheBaselineTriesTheRunnerUp) {
  ScriptModel model;
  int confirmations = 0;
  SearchOutcome s = RunSearch(Options(), [&](int id, const TrialRequest& r) -> std::optional<Trial> {
    Trial t = model(id, r);
    if (r.step == "confirm" && ++confirmations == 1) {
      t.samples_per_s = 100;
      t.ci_low = 99;
      t.ci_high = 101;
    }
    return t;
  });
  // The recommendation, the baseline again right after it (still faster than the slow reading), the runner-up.
  ASSERT_EQ(confirmations, 3);
  const Trial& first = s.trials[s.trials.size() - 3];
  const Trial& second = s.trials.back();
  EXPECT_EQ(s.trials[s.trials.size() - 2].id, s.baseline_again_trial);
  EXPECT_EQ(first.request.step, "confirm");
  EXPECT_EQ(second.request.step, "confirm");
  EXPECT_NE(first.request.knobs, second.request.knobs);
  EXPECT_EQ(s.recommended, second.request.knobs);
  EXPECT_NE(s.recommended, s.baseline);
  EXPECT_EQ(s.confirm_trial, second.id);
  EXPECT_THAT(DecisionOf(s, "confirm"), HasSubstr("was confirmed in its place. Confirmed: the recommendation trains "
                                                  "at"));
  for (const auto& w : s.warnings) EXPECT_THAT(w, Not(HasSubstr("keep its settings")));
}

}  // namespace
}  // namespace sat::tune
