#include "tune/trial_length.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tune/compare.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;

// A trial of 2-second steps stopped at a 20 s cap: 4 s of start-up, 8 observations over 16 s, 6 steps in the
// 12 s after warm-up.
Trial SlowSteps() {
  Trial t;
  t.id = 3;
  t.exit_class = run::ExitClass::kStopped;
  t.helper_seen = true;
  t.samples_per_s = 32;
  t.wall_s = 20;
  t.warmup_s = 4;
  t.steady_s = 12;
  t.observations = 8;
  t.steady_steps = 6;
  return t;
}

TEST(TrialLength, TooShortMeansStoppedAtTheCapWithFewSteadySteps) {
  EXPECT_TRUE(TooShort(SlowSteps(), 20));
  Trial t = SlowSteps();
  t.steady_steps = kMinSteadySteps;
  EXPECT_FALSE(TooShort(t, 20));
  t = SlowSteps();
  t.converged = true;
  EXPECT_FALSE(TooShort(t, 20));
  t = SlowSteps();
  t.exit_class = run::ExitClass::kFinished;  // the command ended on its own: more time would not help
  EXPECT_FALSE(TooShort(t, 20));
  t = SlowSteps();
  t.interrupted = true;
  EXPECT_FALSE(TooShort(t, 20));
  // Stopped before its cap: the estimate looked converged when saturate stopped it, and late reports changed it.
  EXPECT_FALSE(TooShort(SlowSteps(), 25));
  t = SlowSteps();
  t.samples_per_s = 0;
  t.helper_seen = false;  // nothing reported at all: not a matter of length
  EXPECT_FALSE(TooShort(t, 20));
  t.helper_seen = true;   // reported, but no step finished after the first one
  EXPECT_TRUE(TooShort(t, 20));
  t.helper_seen = false;
  t.torch_loaded = true;  // torch loaded, its first step still running at the cap (seen on an H100 at a 10 s cap)
  EXPECT_TRUE(TooShort(t, 20));
}

TEST(TrialLength, NeededLengthFollowsThePaceOfObservations) {
  // Start-up 4 s + warm-up 4 s + 1.5 x 8 steps x 2 s.
  EXPECT_DOUBLE_EQ(NeededLength(SlowSteps(), 20), 32);
  // Never less than half again the cap it ran under.
  Trial quick = SlowSteps();
  quick.steady_steps = 600;
  EXPECT_DOUBLE_EQ(NeededLength(quick, 20), 30);
  // No steady step: the pace of the observations (16 s / 8), then nothing to go by: twice the cap.
  Trial none = SlowSteps();
  none.steady_steps = 0;
  EXPECT_DOUBLE_EQ(NeededLength(none, 20), 32);
  none.observations = 1;
  EXPECT_DOUBLE_EQ(NeededLength(none, 20), 40);
}

TEST(TrialLength, LongerTrialsWhileTheBudgetHoldsThem) {
  LengthPlan plan = PlanLength(SlowSteps(), 20, 400, true, false);
  EXPECT_TRUE(plan.again);
  EXPECT_DOUBLE_EQ(plan.cap_s, 32);
  EXPECT_THAT(plan.note, HasSubstr("trial 3 saw 6 steady steps in 20s"));
  EXPECT_THAT(plan.note, HasSubstr("trials now run up to 32s each (fewer, longer trials)"));

  LengthPlan short_budget = PlanLength(SlowSteps(), 20, 90, true, false);  // 3 x 32 s do not fit in 90 s
  EXPECT_FALSE(short_budget.again);
  EXPECT_THAT(short_budget.note, HasSubstr("trial 3 is too slow to measure in this budget"));
  EXPECT_THAT(short_budget.note, HasSubstr("a larger --budget allows it"));

  LengthPlan fixed = PlanLength(SlowSteps(), 20, 4000, true, true);
  EXPECT_FALSE(fixed.again);
  EXPECT_THAT(fixed.note, HasSubstr("--trial-budget caps it"));

  EXPECT_FALSE(PlanLength(SlowSteps(), 32, 4000, false, false).again);  // made longer once already
}

}  // namespace
}  // namespace sat::tune
