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

AttemptRecord WithEnergy(std::optional<int> gpu, std::optional<double> joules, std::string slurm_job = "") {
  AttemptRecord a = On(gpu, 0, 10);
  a.energy_j = joules;
  a.slurm_job = std::move(slurm_job);
  return a;
}

TEST(SweepEnergy, SumsEndedAttemptsPerGpuAndCountsThoseWithoutAReading) {
  AttemptRecord running = WithEnergy(0, std::nullopt);
  running.ended_unix.reset();
  const SweepEnergy e = EnergyOf({WithEnergy(0, 900e3), WithEnergy(0, 300e3), WithEnergy(1, 600e3),
                                  WithEnergy(1, std::nullopt), WithEnergy(0, 1.8e6, "41_2"), running});
  EXPECT_DOUBLE_EQ(e.joules, 3.6e6);
  EXPECT_EQ(e.attempts, 4);
  EXPECT_EQ(e.without, 1);  // the running one is not counted yet
  ASSERT_EQ(e.by_gpu.size(), 2u);
  EXPECT_DOUBLE_EQ(e.by_gpu.at(0), 1.2e6);  // the Slurm attempt's GPU 0 is another machine's
  EXPECT_EQ(FormatEnergy(e),
            "Energy: 1.000 kWh (3600.0 kJ) over 4 attempts, 1 without a reading: gpu0 1200.0 kJ, gpu1 600.0 kJ\n");
  const nlohmann::json j = EnergyJson(e);
  EXPECT_DOUBLE_EQ(j["kwh"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["by_gpu"]["1"].get<double>(), 600e3);
  EXPECT_EQ(j["attempts_without_reading"], 1);
}

TEST(SweepCost, SmallAmountsKeepTwoSignificantDigitsInsteadOfReadingZero) {
  // A 4-second sweep: 0.0012 GPU-hours, 1.1 kJ.
  const GpuHours h = GpuHoursOf({On(0, 0, 4.32)}, 10);
  EXPECT_NE(FormatGpuHours(h, std::nullopt).find("GPU-hours: 0.0012 held on 1 GPU"), std::string::npos)
      << FormatGpuHours(h, std::nullopt);
  EXPECT_EQ(FormatEnergy(EnergyOf({WithEnergy(0, 1118)})), "Energy: 0.00031 kWh (1.1 kJ) over 1 attempt: gpu0 1.1 kJ\n");
}

TEST(SweepEnergy, NoReadingSaysNothingAndIsNullNotZero) {
  const SweepEnergy e = EnergyOf({WithEnergy(std::nullopt, std::nullopt)});
  EXPECT_EQ(FormatEnergy(e), "");
  EXPECT_TRUE(EnergyJson(e)["joules"].is_null());
  EXPECT_EQ(EnergyJson(e)["attempts_without_reading"], 1);
}

}  // namespace
}  // namespace sat::sweep
