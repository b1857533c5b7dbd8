#include "sim/policy.h"

#include <gtest/gtest.h>

namespace sat::sim {
namespace {

TEST(ParsePolicy, RoundTripsEveryName) {
  for (Policy p : AllPolicies()) {
    auto parsed = ParsePolicy(PolicyName(p));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, p);
  }
}

TEST(ParsePolicy, SuggestsTheClosestName) {
  auto r = ParsePolicy("threshhold");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().exit_code, kExitUsage);
  EXPECT_EQ(r.error().message,
            "unknown policy 'threshhold'; did you mean 'threshold'? "
            "(one of sequential, one-per-gpu, fixed-k, threshold, saturate, slurm-sized)");
}

TEST(ValidateParams, RejectsOutOfRangeKnobs) {
  EXPECT_TRUE(ValidateParams(PolicyParams{}));
  auto with = [](auto edit) {
    PolicyParams p;
    edit(p);
    return ValidateParams(p).ok();
  };
  EXPECT_FALSE(with([](PolicyParams& p) { p.fixed_k = 0; }));
  EXPECT_FALSE(with([](PolicyParams& p) { p.free_fraction = 0; }));
  EXPECT_FALSE(with([](PolicyParams& p) { p.free_fraction = 1.1; }));
  EXPECT_FALSE(with([](PolicyParams& p) { p.max_runs_per_gpu = 0; }));
  EXPECT_FALSE(with([](PolicyParams& p) { p.margin = -0.1; }));
  EXPECT_FALSE(with([](PolicyParams& p) { p.cpu_limit = 0; }));
}

}  // namespace
}  // namespace sat::sim
