#include "core/stage.h"

#include <gtest/gtest.h>

#include <vector>

namespace sat::core {
namespace {

// Samples every 0.5 s from `from` to `to` (inclusive).
std::vector<telemetry::Sample> Every500ms(double from, double to) {
  std::vector<telemetry::Sample> out;
  for (double t = from; t <= to + 1e-9; t += 0.5) {
    telemetry::Sample s;
    s.mono_s = t;
    out.push_back(s);
  }
  return out;
}

std::vector<double> Times(const std::vector<telemetry::Sample>& samples) {
  std::vector<double> out;
  for (const auto& s : samples) out.push_back(s.mono_s);
  return out;
}

TEST(SteadySamples, TheSteadyPartOnlyNotTheShutdownAfterIt) {
  // A stage from 100 s to 110 s whose steady part is [104, 106.2]: the command's stop after 106.2 is left out.
  auto samples = Every500ms(100, 110);
  EXPECT_EQ(Times(SteadySamples(samples, 100, 110, 104, 106.2)), (std::vector<double>{104, 104.5, 105, 105.5, 106}));
}

TEST(SteadySamples, TheWholeStageWhenTheSteadyPartHoldsFewerThanTwo) {
  auto samples = Every500ms(100, 110);
  EXPECT_EQ(SteadySamples(samples, 100, 110, 104.1, 104.4).size(), 21u);  // none inside: all 21 of the stage
  EXPECT_EQ(SteadySamples(samples, 100, 110, 104, 104.4).size(), 21u);    // one inside
  // Samples after the stage's end belong to the next stage.
  EXPECT_EQ(SteadySamples(Every500ms(100, 115), 100, 110, 120, 130).size(), 21u);
  EXPECT_TRUE(SteadySamples({}, 100, 110, 104, 106).empty());
}

TEST(SteadySamples, ASteadyPartPastTheStageEndStopsAtTheEnd) {
  auto samples = Every500ms(100, 115);
  EXPECT_EQ(Times(SteadySamples(samples, 100, 110, 109, 112)), (std::vector<double>{109, 109.5, 110}));
}

}  // namespace
}  // namespace sat::core
