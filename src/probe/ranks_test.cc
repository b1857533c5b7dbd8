#include "probe/ranks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/test_results.h"
#include "probe/verdict.h"

namespace sat::probe {
namespace {

using ::testing::HasSubstr;
using namespace results;

// A rank's counters over `steps` steps: per step `wait_ms` of data wait, `after_ms` of after-step work and
// `model_ms` in the model, reaching backward() `forward_ms` after its batch arrived.
measure::ProcessTotals Rank(int64_t rank, double wait_ms, double after_ms, double model_ms, double forward_ms,
                            double rate, int64_t steps = 100) {
  measure::ProcessTotals p;
  p.pid = 1000 + rank;
  p.rank = rank;
  p.steps = steps;
  p.samples = 32.0 * static_cast<double>(steps);
  p.wait_s = wait_ms / 1000 * static_cast<double>(steps);
  p.after_step_s = after_ms / 1000 * static_cast<double>(steps);
  p.step_s = (model_ms + after_ms) / 1000 * static_cast<double>(steps);
  p.before_backward_s = (wait_ms + after_ms + forward_ms) / 1000 * static_cast<double>(steps);
  p.samples_per_s = rate;
  return p;
}

core::StageResult Job(std::vector<measure::ProcessTotals> ranks) {
  core::StageResult s = Measured(core::StageKind::kFull, 1000);
  s.world_size = static_cast<int64_t>(ranks.size());
  s.totals.per_process = std::move(ranks);
  return s;
}

TEST(FindStraggler, BalancedRanksHaveNone) {
  core::StageResult s = Job({Rank(0, 1, 0.5, 30, 10, 1000), Rank(1, 1.2, 0.4, 30, 10.5, 1000)});
  EXPECT_EQ(RankRows(s).size(), 2u);
  EXPECT_FALSE(FindStraggler(s));
}

TEST(FindStraggler, ALateRankInLockStepIsNamedByItsDataWait) {
  // Rank 1 loads 38 ms per step; rank 0 waits for it inside forward (DDP's buffer broadcast), so rank 0's time
  // to backward is the longer one. The data wait decides, not the time to backward.
  core::StageResult s = Job({Rank(0, 0.2, 0, 61, 46, 520), Rank(1, 38.6, 0, 23, 7.5, 520)});
  std::optional<Straggler> st = FindStraggler(s);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->rank, 1);
  EXPECT_EQ(st->cause, "rank 1's data loading");
  EXPECT_THAT(st->evidence, HasSubstr("rank 1 waits 38.6 ms per step"));
  EXPECT_NEAR(st->excess_share, 38.4 / 61.2, 0.01);
}

TEST(FindStraggler, ASlowForwardPassIsNamed) {
  core::StageResult s = Job({Rank(0, 1, 0, 40, 10, 700), Rank(1, 1, 0, 40, 22, 700), Rank(2, 1, 0, 40, 10, 700)});
  std::optional<Straggler> st = FindStraggler(s);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->rank, 1);
  EXPECT_EQ(st->cause, "rank 1's forward pass");
}

TEST(FindStraggler, RanksThatDoNotWaitForEachOtherAreComparedByRate) {
  core::StageResult s = Job({Rank(0, 20, 0, 10, 5, 1000), Rank(1, 20, 0, 10, 5, 800)});
  std::optional<Straggler> st = FindStraggler(s);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->rank, 1);
  EXPECT_EQ(st->cause, "rank 1's data loading");  // two thirds of its loop waits for data
  EXPECT_NEAR(st->excess_share, 0.2, 1e-9);
}

TEST(FindStraggler, TooFewStepsOrOneRankDecideNothing) {
  EXPECT_FALSE(FindStraggler(Job({Rank(0, 1, 0, 30, 10, 1000, 2), Rank(1, 40, 0, 30, 10, 500, 2)})));
  EXPECT_FALSE(FindStraggler(Job({Rank(0, 1, 0, 30, 10, 1000)})));
  EXPECT_TRUE(RankRows(Job({Rank(0, 1, 0, 30, 10, 1000)})).empty());
}

TEST(Decide, AStragglerIsTheBottleneck) {
  ProbeResult r = WithHelper(false, 5000, 600, 520);
  r.full.world_size = 2;
  r.full.totals.per_process = {Rank(0, 0.2, 0, 61, 46, 520), Rank(1, 38.6, 0, 23, 7.5, 520)};
  Verdict v = Decide(r);
  EXPECT_EQ(v.bottleneck, "straggler");
  EXPECT_EQ(v.cause, "rank 1's data loading");
  EXPECT_THAT(v.next, HasSubstr("rank 1's loader"));
}

measure::LoaderInfo Loader(int64_t batch, std::optional<int64_t> last, bool batchnorm, bool drop_last) {
  measure::LoaderInfo l;
  l.key = "train.py:40#0";
  l.batch_size = batch;
  l.last_batch = last;
  l.batchnorm = batchnorm;
  l.drop_last = drop_last;
  return l;
}

TEST(BatchLayoutOf, PerDeviceAndGlobal) {
  core::StageResult s = Measured(core::StageKind::kFull, 1000);
  s.world_size = 2;
  s.rank_loaders = {{0, Loader(32, std::nullopt, true, false)}, {1, Loader(32, std::nullopt, true, false)}};
  std::optional<BatchLayout> b = BatchLayoutOf(s);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->per_device, 32);
  EXPECT_EQ(b->global, 64);
  EXPECT_EQ(BatchText(*b), "32 per device x 2 ranks = 64 global");
  EXPECT_TRUE(BatchNotes(s).empty());
  // A rank whose loader message never came still holds a device.
  s.world_size = 4;
  EXPECT_EQ(BatchLayoutOf(s)->global, 128);
}

TEST(BatchNotes, SmallPerDeviceBatchAndAPartialLastBatchWithBatchNorm) {
  core::StageResult s = Measured(core::StageKind::kFull, 1000);
  s.world_size = 2;
  s.rank_loaders = {{0, Loader(8, 3, true, false)}, {1, Loader(8, 3, true, false)}};
  std::vector<std::string> notes = BatchNotes(s);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("a batch of 8 per device is under 16"));
  EXPECT_THAT(notes[1], HasSubstr("ends with a batch of 3 instead of 8 per device"));
  EXPECT_THAT(notes[1], HasSubstr("drop_last=True"));
  // No BatchNorm, or drop_last: the partial batch is harmless.
  s.rank_loaders = {{0, Loader(64, 3, false, false)}, {1, Loader(64, 3, false, false)}};
  EXPECT_TRUE(BatchNotes(s).empty());
}

TEST(BatchNotes, OneProcessGetsOnlyTheBatchNormWarning) {
  core::StageResult s = Measured(core::StageKind::kFull, 1000);
  s.loader = Loader(4, 1, true, false);
  std::vector<std::string> notes = BatchNotes(s);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("ends with a batch of 1 instead of 4,"));
}

}  // namespace
}  // namespace sat::probe
