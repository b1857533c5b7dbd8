#include "core/energy.h"

#include <gtest/gtest.h>

#include "core/stage.h"
#include "core/stage_costs.h"
#include "core/test_stages.h"

namespace sat::core {
namespace {

using namespace fixtures;

telemetry::Sample At(double t, std::optional<double> energy_j, std::optional<double> watts, unsigned index = 0) {
  telemetry::Sample s;
  s.mono_s = t;
  telemetry::GpuSample g;
  g.index = index;
  g.energy_j = energy_j;
  g.power_draw_w = watts;
  s.gpus.push_back(g);
  return s;
}

TEST(GpuEnergy, TheCounterWhenTheEndsHaveIt) {
  auto e = GpuEnergy({At(10, 1000, 100), At(11, std::nullopt, 100), At(14, 2000, 900)}, 0);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->method, "counter");
  EXPECT_DOUBLE_EQ(e->joules, 1000);
  EXPECT_DOUBLE_EQ(e->seconds, 4);
}

TEST(GpuEnergy, PowerTimesTimeWithoutTheCounter) {
  auto e = GpuEnergy({At(0, std::nullopt, 100), At(1, std::nullopt, 300), At(2, std::nullopt, std::nullopt),
                      At(3, std::nullopt, 200), At(4, std::nullopt, 200)},
                     0);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->method, "power x time");
  EXPECT_DOUBLE_EQ(e->joules, 200 + 200);  // 0-1 at 200 W mean, 3-4 at 200 W; the gap around t=2 is left out
  EXPECT_DOUBLE_EQ(e->seconds, 2);
}

TEST(GpuEnergy, NeitherCounterNorPowerIsNotAvailableNeverZero) {
  EXPECT_FALSE(GpuEnergy({At(0, std::nullopt, std::nullopt), At(1, std::nullopt, std::nullopt)}, 0));
  EXPECT_FALSE(GpuEnergy({At(0, 5, 100), At(1, 6, 100)}, 1)) << "another GPU";
  EXPECT_FALSE(GpuEnergy({At(0, 5, 100)}, 0)) << "one sample spans nothing";
  EXPECT_FALSE(GpuEnergy({At(0, 5, 100), At(1, 6, 100)}, -1)) << "no GPU probed";
}

TEST(EnergyPerSampleOf, MeanPowerOverTheRate) {
  StageResult s = Measured(StageKind::kFull, 500);
  s.telemetry.gpu = true;
  s.telemetry.gpu_energy = EnergyReading{2500, 10, "counter"};  // 250 W
  auto e = EnergyPerSampleOf(s);
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->watts, 250);
  EXPECT_DOUBLE_EQ(e->joules_per_sample, 0.5);
  EXPECT_DOUBLE_EQ(e->samples_per_kwh, 7.2e6);
  s.telemetry.gpu_energy.reset();
  EXPECT_FALSE(EnergyPerSampleOf(s));
}

TEST(CpuEnergy, TheRaplCounterBetweenTheEnds) {
  auto host = [](double t, std::optional<double> j) {
    telemetry::Sample s;
    s.mono_s = t;
    s.host.cpu_energy_j = j;
    return s;
  };
  auto e = CpuEnergy({host(2, 100), host(3, std::nullopt), host(6, 340)});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->method, "rapl");
  EXPECT_DOUBLE_EQ(e->joules, 240);
  EXPECT_DOUBLE_EQ(e->seconds, 4);
  EXPECT_FALSE(CpuEnergy({host(2, std::nullopt), host(6, 340)})) << "no counter at the start: n/a, never 0";
  EXPECT_FALSE(CpuEnergy({host(2, 100)}));
}

TEST(EnergyPerSampleOf, TheCpusWithoutAGpuAndTheGpusWithOne) {
  StageResult s = Measured(StageKind::kFull, 200);
  s.telemetry.cpu_energy = EnergyReading{600, 10, "rapl"};  // 60 W
  auto e = EnergyPerSampleOf(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->method, "rapl");
  EXPECT_DOUBLE_EQ(e->joules_per_sample, 0.3);
  // With a GPU probed, the figure is the GPU's: a GPU without a reading is n/a, not the CPUs' energy.
  s.telemetry.gpu = true;
  EXPECT_FALSE(EnergyPerSampleOf(s));
  s.telemetry.gpu_energy = EnergyReading{2500, 10, "counter"};
  EXPECT_EQ(EnergyPerSampleOf(s)->method, "counter");
}

TEST(CostOf, PerMillionSamplesAndPerEpoch) {
  StageResult s = Measured(StageKind::kFull, 1000);
  measure::LoaderInfo l;
  l.epoch_samples = 60000;
  s.loader = l;
  auto c = CostOf(s, 3.6);  // 0.001 per second; 1,000 samples/s
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->per_million_samples, 1.0);
  ASSERT_TRUE(c->per_epoch);
  EXPECT_DOUBLE_EQ(*c->epoch_samples, 60000);
  EXPECT_DOUBLE_EQ(*c->per_epoch, 0.06);  // epoch samples / samples/s x price
  // Two ranks hold two GPUs; the epoch is both ranks' shares.
  s.world_size = 2;
  s.rank_loaders = {{0, l}, {1, l}};
  c = CostOf(s, 3.6);
  EXPECT_DOUBLE_EQ(c->per_million_samples, 2.0);
  EXPECT_DOUBLE_EQ(*c->epoch_samples, 120000);
  EXPECT_DOUBLE_EQ(*c->per_epoch, 0.24);
  // No price, or an unknown epoch length.
  EXPECT_FALSE(CostOf(s, 0));
  s.rank_loaders[1].epoch_samples.reset();
  EXPECT_FALSE(CostOf(s, 3.6)->per_epoch);
}

}  // namespace
}  // namespace sat::core
