#include "stage/fetch_split.h"

#include <gtest/gtest.h>

#include "stage/test_loader_activity.h"

namespace sat::stage {
namespace {

using fixtures::Loader;

LoaderTimeSplit Shares(double fetch, double prep, double other) {
  LoaderTimeSplit s;
  s.fetch = fetch;
  s.prep = prep;
  s.other = other;
  return s;
}

TEST(SplitLoaderTime, ALoaderWaitingOnASlowMountIsFetchBound) {
  // One process at 40 samples/s: 5% on the CPU, blocked in the kernel 90% of the ticks.
  LoaderActivity a = Loader(40, 1, 0.05, 0.9);
  a.read_per_s = 40 * 4096;
  std::optional<LoaderTimeSplit> s = SplitLoaderTime(a);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->prep, 0.05);
  EXPECT_DOUBLE_EQ(s->fetch, 0.9);
  EXPECT_NEAR(s->other, 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(*s->cpu_s_per_sample, 0.05 / 40);
  EXPECT_DOUBLE_EQ(*s->bytes_per_sample, 4096);
  EXPECT_TRUE(FetchBound(*s));
}

TEST(SplitLoaderTime, ALoaderBusyDecodingIsNot) {
  // Four workers, 3.6 cores busy, now and then one blocked on a read.
  std::optional<LoaderTimeSplit> s = SplitLoaderTime(Loader(900, 4, 3.6, 0.2));
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->prep, 0.9);
  EXPECT_DOUBLE_EQ(s->fetch, 0.05);
  EXPECT_FALSE(FetchBound(*s));
  // Fetch never takes more than what prep leaves.
  std::optional<LoaderTimeSplit> full = SplitLoaderTime(Loader(900, 1, 1.0, 1.0));
  EXPECT_DOUBLE_EQ(full->fetch, 0.0);
  EXPECT_DOUBLE_EQ(full->other, 0.0);
}

TEST(SplitLoaderTime, FetchMustOutweighPrepToBind) {
  LoaderTimeSplit even = Shares(0.4, 0.45, 0.15);
  EXPECT_FALSE(FetchBound(even));
  LoaderTimeSplit small = Shares(0.25, 0.1, 0.65);
  EXPECT_FALSE(FetchBound(small));
}

TEST(SplitLoaderTime, FullStageWithoutWorkersSplitsTheDataWait) {
  LoaderActivity a = Loader(30, 1, 0.6, 0.45);
  a.data_wait_share = 0.6;  // 45 of the 60 points of waiting were blocked reads
  std::optional<LoaderTimeSplit> s = SplitLoaderTime(a);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->fetch, 0.75);
  EXPECT_DOUBLE_EQ(s->prep, 0.25);
  EXPECT_DOUBLE_EQ(s->other, 0.0);
  a.data_wait_share = 0;  // no waiting: no loader time to split
  EXPECT_FALSE(SplitLoaderTime(a).has_value());
}

TEST(SplitLoaderTime, FullStageWithWorkersLeavesTheTrainersCoreOut) {
  // Two workers; the trainer waits 50% of the loop, so it is busy half a core; 1.3 cores in all.
  LoaderActivity a = Loader(100, 2, 1.3, 1.0);
  a.data_wait_share = 0.5;
  std::optional<LoaderTimeSplit> s = SplitLoaderTime(a);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->prep, 0.4);
  EXPECT_DOUBLE_EQ(s->fetch, 0.5);
}

TEST(SplitLoaderTime, NeedsARateCpuAndStates) {
  EXPECT_FALSE(SplitLoaderTime(Loader(0, 1, 0.5, 0.5)).has_value());
  LoaderActivity no_states = Loader(10, 1, 0.5, 0);
  no_states.blocked.reset();
  EXPECT_FALSE(SplitLoaderTime(no_states).has_value());
  LoaderActivity no_cpu = Loader(10, 1, 0.5, 0);
  no_cpu.cpu_cores.reset();
  EXPECT_FALSE(SplitLoaderTime(no_cpu).has_value());
}

}  // namespace
}  // namespace sat::stage
