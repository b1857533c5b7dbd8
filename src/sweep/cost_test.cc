#include "sweep/cost.h"

#include <gtest/gtest.h>

namespace sat::sweep {
namespace {

AttemptRecord On(std::optional<int> gpu, double start, std::optional<double> end) {
  AttemptRecord a;
  a.gpu_index = gpu;
  a.started_unix = start;
  a.ended_unix = end;
  return a;
}

TEST(GpuHours, PackedAttemptsHoldTheirGpuOnceAndCountEachAloneForOnePerAttempt) {
  // GPU 0: two runs packed over [0, 3600] and [1800, 5400], then one alone at [7200, 9000]; GPU 1: [0, 3600].
  const std::vector<AttemptRecord> attempts = {On(0, 0, 3600), On(0, 1800, 5400), On(0, 7200, 9000),
                                               On(1, 0, 3600)};
  const GpuHours h = GpuHoursOf(attempts, 1e9);
  EXPECT_DOUBLE_EQ(h.held, 1.5 + 0.5 + 1.0);
  EXPECT_DOUBLE_EQ(h.one_per_attempt, 1 + 1 + 0.5 + 1);
  EXPECT_EQ(h.attempts, 4);
  EXPECT_EQ(h.gpus, 2);
  const std::string text = FormatGpuHours(h, 2.5);
  EXPECT_NE(text.find("GPU-hours: 3.000 held on 2 GPUs, 3.500 with one GPU per attempt (4 attempts): packing saved "
                      "up to 0.500 (14%)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("At 2.50 per GPU-hour: 7.50 held, 8.75 with one GPU per attempt, up to 1.25 saved"),
            std::string::npos)
      << text;
  const nlohmann::json j = GpuHoursJson(h, 2.5);
  EXPECT_DOUBLE_EQ(j["cost_held"].get<double>(), 7.5);
  EXPECT_DOUBLE_EQ(j["cost_one_per_attempt"].get<double>(), 8.75);
}

TEST(GpuHours, RunningAttemptsCountToNowAndCpuOrSlurmAttemptsNotAtAll) {
  AttemptRecord slurm = On(0, 0, 3600);
  slurm.slurm_job = "1234";
  const GpuHours h = GpuHoursOf({On(std::nullopt, 0, 3600), slurm, On(2, 3600, std::nullopt)}, 5400);
  EXPECT_EQ(h.attempts, 1);
  EXPECT_DOUBLE_EQ(h.held, 0.5);
  EXPECT_DOUBLE_EQ(h.one_per_attempt, 0.5);
  EXPECT_EQ(FormatGpuHours(h, std::nullopt).find("At "), std::string::npos);
  EXPECT_EQ(FormatGpuHours(h, std::nullopt).find("saved"), std::string::npos) << "nothing packed, nothing saved";
  EXPECT_TRUE(GpuHoursJson(h, std::nullopt)["cost_held"].is_null());
}

TEST(GpuHours, NoGpuAttemptsSayNothing) {
  const GpuHours h = GpuHoursOf({On(std::nullopt, 0, 10)}, 20);
  EXPECT_EQ(h.attempts, 0);
  EXPECT_EQ(FormatGpuHours(h, 2.5), "");
  // An attempt whose clock went backwards (a journal edited by hand) holds nothing.
  EXPECT_EQ(GpuHoursOf({On(0, 100, 50)}, 200).attempts, 0);
}

}  // namespace
}  // namespace sat::sweep
