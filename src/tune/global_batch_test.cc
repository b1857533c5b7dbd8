#include "tune/global_batch.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

SearchOutcome Outcome(int64_t world) {
  SearchOutcome s;
  KnobState batch;
  batch.spec.name = "bs";
  batch.spec.role = KnobRole::kBatchSize;
  KnobState workers;
  workers.spec.name = "workers";
  workers.spec.role = KnobRole::kWorkers;
  s.knobs = {workers, batch};
  s.recommended = {{"bs", 64}, {"workers", 2}};
  Trial t;
  t.world_size = world;
  s.trials = {t};
  return s;
}

TEST(RecommendedGlobalBatch, PerDeviceTimesRanks) {
  std::optional<GlobalBatch> b = RecommendedGlobalBatch(Outcome(4));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->per_device, 64);
  EXPECT_EQ(b->global, 256);
  EXPECT_EQ(GlobalBatchText(*b), "bs 64 is per device: 4 ranks train on a global batch of 256");
}

TEST(RecommendedGlobalBatch, NoneForOneProcessOrWithoutABatchKnob) {
  EXPECT_FALSE(RecommendedGlobalBatch(Outcome(1)));
  SearchOutcome s = Outcome(2);
  s.recommended.erase("bs");
  EXPECT_FALSE(RecommendedGlobalBatch(s));
}

TEST(Trial, WorldSizeSurvivesTheCache) {
  Trial t;
  t.request.step = "baseline";
  t.world_size = 2;
  Result<Trial> back = TrialFromJson(TrialToJson(t));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->world_size, 2);
}

}  // namespace
}  // namespace sat::tune
