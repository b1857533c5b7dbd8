#include "tune/explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tune/test_model.h"

namespace sat::tune {
namespace {

using ::testing::HasSubstr;

TEST(Explain, NeedsComeFromTheConfirmation) {
  TuneResult r = testing::ModelResult();
  Needs n = NeedsOf(r.search);
  ASSERT_EQ(n.trial, r.search.confirm_trial);
  EXPECT_EQ(n.cpu_cores, 2);  // 170% at p95
  // 1.7 GB resident (7 workers) + 25%, rounded up to 0.5 GiB: 2.0 GiB.
  EXPECT_DOUBLE_EQ(*n.ram_bytes, 2.0 * (1ull << 30));
  EXPECT_FALSE(n.loader_bound);
  EXPECT_EQ(NeedsSentence(n, true),
            "Per GPU, this configuration needs 2 CPU cores (1.70 busy at p95) and 2.0 GiB of RAM (1.6 GiB peak + 25%).");
}

TEST(Explain, LoaderBoundSaysMoreCoresHelp) {
  testing::ScriptModel model;
  model.per_worker = 100;  // even 8 workers (800) stay far below the compute ceiling
  TuneResult r = testing::ModelResult(model);
  Needs n = NeedsOf(r.search);
  EXPECT_TRUE(n.loader_bound);
  EXPECT_THAT(NeedsSentence(n, true), HasSubstr("more CPU cores per GPU would raise throughput"));
  EXPECT_THAT(NeedsSentence(n, false), HasSubstr("Loading still limits it: more CPU cores would raise throughput"));
}

TEST(Explain, NothingMeasuredSaysNothing) {
  SearchOutcome empty;
  Needs n = NeedsOf(empty);
  EXPECT_FALSE(n.trial);
  EXPECT_EQ(NeedsSentence(n, true), "");
}

}  // namespace
}  // namespace sat::tune
