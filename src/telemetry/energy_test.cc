#include "telemetry/energy.h"

#include <gtest/gtest.h>

#include "telemetry/test_energy.h"

namespace sat::telemetry {
namespace {

TEST(EnergyBetween, NeedsBothReadingsAndGrowth) {
  EXPECT_EQ(EnergyBetween(10.0, 25.5), 15.5);
  EXPECT_FALSE(EnergyBetween(std::nullopt, 25.5));
  EXPECT_FALSE(EnergyBetween(10.0, std::nullopt));
  EXPECT_FALSE(EnergyBetween(30.0, 25.5));
}

TEST(EnergyBetweenReadings, CounterGrowthElsePowerTimesTime) {
  EXPECT_DOUBLE_EQ(*EnergyBetweenReadings(CounterAt(1, 200), CounterAt(3, 200)), 400);
  // Trapezoid of the two powers.
  EXPECT_DOUBLE_EQ(*EnergyBetweenReadings(PowerAt(0, 100), PowerAt(2, 300)), 400);
  // A counter that went back (driver reloaded) falls back to power when there is one.
  EnergyReading a{.t = 0, .counter_j = 500, .power_w = 100}, b{.t = 1, .counter_j = 10, .power_w = 100};
  EXPECT_DOUBLE_EQ(*EnergyBetweenReadings(a, b), 100);
  b.power_w.reset();
  EXPECT_FALSE(EnergyBetweenReadings(a, b));
  EXPECT_FALSE(EnergyBetweenReadings(CounterAt(2, 1), CounterAt(2, 1)));  // no time between
  EXPECT_FALSE(EnergyBetweenReadings(NothingAt(0), PowerAt(1, 100)));  // one power is no trapezoid
}

TEST(EnergyReadingOf, GpuCounterAndPowerOrTheCpuPackagesCounter) {
  telemetry::Sample s;
  s.mono_s = 7;
  s.host.cpu_energy_j = 42;
  telemetry::GpuSample g;
  g.index = 3;
  g.energy_j = 1000;
  g.power_draw_w = 250;
  s.gpus.push_back(g);
  EnergyReading r = EnergyReadingOf(s, 3);
  EXPECT_EQ(r.t, 7);
  EXPECT_EQ(r.counter_j, 1000);
  EXPECT_EQ(r.power_w, 250);
  r = EnergyReadingOf(s, -1);
  EXPECT_EQ(r.counter_j, 42);
  EXPECT_FALSE(r.power_w);
  r = EnergyReadingOf(s, 0);  // not sampled
  EXPECT_FALSE(r.counter_j || r.power_w);
}

}  // namespace
}  // namespace sat::telemetry
