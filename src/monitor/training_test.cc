#include "monitor/training.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace sat::monitor {
namespace {

constexpr char kRun[] = "monitor-1";

struct Counters {
  int64_t steps = 0;
  double samples = 0, wait_s = 0, step_s = 0, excluded_s = 0;
  int64_t pid = 7;
};

// A progress message as the helper sends it, through the real parser.
measure::HelperMessage Progress(double t, const Counters& c, const char* run = kRun) {
  nlohmann::json j = {{"v", 1},          {"type", "progress"},  {"run", run},
                      {"pid", c.pid},    {"t", t},              {"steps", c.steps},
                      {"samples", c.samples}, {"wait_s", c.wait_s}, {"step_s", c.step_s}};
  if (c.excluded_s > 0) j["excluded_s"] = c.excluded_s;
  auto m = measure::ParseHelperMessage(j.dump());
  EXPECT_TRUE(m) << m.error().message;
  return m.ok() ? *m : measure::HelperMessage{};
}

// One process at 20 steps/s of 16 samples, a quarter of each step waiting for the loader, reporting every 0.1 s
// from `from` to `to`, with `trained_s` seconds of training done at `from`.
void Train(TrainingMeter& meter, double from, double to, int64_t pid = 7, double excluded_s = 0,
           double trained_s = 0) {
  for (double t = from; t <= to + 1e-9; t += 0.1) {
    const double s = trained_s + t - from;
    const double steps = s * 20 + 0.5;
    meter.Add(Progress(t, {static_cast<int64_t>(steps), steps * 16, s / 4, s * 3 / 4, excluded_s, pid}));
  }
}

TEST(TrainingMeter, NothingReportedIsNotApplicableNotZero) {
  TrainingMeter meter(kRun);
  TrainingRates r = meter.Take();
  EXPECT_FALSE(r.samples_per_s);
  EXPECT_FALSE(r.steps_per_s);
  EXPECT_FALSE(r.data_wait_share);
  meter.Add(Progress(10, {1, 16, 0.01, 0.04}, "another-run"));
  EXPECT_FALSE(meter.Take().samples_per_s) << "another run's report";
  meter.Add(Progress(10, {1, 16, 0.01, 0.04}));
  r = meter.Take();
  EXPECT_FALSE(r.samples_per_s) << "one report is no rate yet";
  EXPECT_FALSE(r.data_wait_share) << "nor a share: the first report comes before any step time";
}

TEST(TrainingMeter, TheFirstReportCountsInTheFirstInterval) {
  TrainingMeter meter(kRun);
  // The helper's first report: the first batch's wait, no step yet.
  meter.Add(Progress(10, {1, 16, 0.3, 0}));
  EXPECT_FALSE(meter.Take().data_wait_share);
  meter.Add(Progress(10.4, {5, 80, 0.4, 0.3}));
  const TrainingRates r = meter.Take();
  EXPECT_NEAR(r.data_wait_share.value(), 0.4 / 0.7, 1e-9);
  EXPECT_NEAR(r.samples_per_s.value(), 64 / 0.4, 1e-6);
  EXPECT_NEAR(r.steps_per_s.value(), 64 / 0.4 * 5 / 80, 1e-6);
}

TEST(TrainingMeter, RatesOfOneIntervalFromTheCumulativeCounters) {
  TrainingMeter meter(kRun);
  Train(meter, 0, 1);
  meter.Take();
  Train(meter, 1.1, 2, 7, 0, 1.1);
  const TrainingRates r = meter.Take();
  EXPECT_NEAR(r.samples_per_s.value(), 320, 1e-6);
  EXPECT_NEAR(r.steps_per_s.value(), 20, 1e-6);
  EXPECT_NEAR(r.data_wait_share.value(), 0.25, 1e-9);
  // The command stopped reporting: no step ended in the interval.
  const TrainingRates idle = meter.Take();
  EXPECT_EQ(idle.samples_per_s, 0);
  EXPECT_EQ(idle.steps_per_s, 0);
  EXPECT_FALSE(idle.data_wait_share);
}

TEST(TrainingMeter, ValidationTimeIsLeftOutAndProcessesAdd) {
  TrainingMeter meter(kRun);
  Train(meter, 0, 1, /*pid=*/7);
  Train(meter, 0, 1, /*pid=*/8);
  meter.Take();
  // pid 7 validates for two seconds, then trains on; its first report after says so with excluded_s.
  Train(meter, 3, 3.5, /*pid=*/7, /*excluded_s=*/2, /*trained_s=*/1);
  Train(meter, 1.1, 3.5, /*pid=*/8, 0, 1.1);
  EXPECT_NEAR(meter.Take().samples_per_s.value(), 2 * 320, 1);
}

}  // namespace
}  // namespace sat::monitor
