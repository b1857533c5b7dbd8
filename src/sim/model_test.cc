#include "sim/model.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>

namespace sat::sim {
namespace {

SimRun Small() {
  SimRun r;
  r.id = "r";
  r.shape = "s";
  r.duration_s = 100;
  r.mem_gib = 10;
  r.peak_gib = 12;
  r.gpu_util = 0.5;
  return r;
}

TEST(GpuShareFactor, OneRunUnderCapacityRunsAtSoloSpeed) { EXPECT_DOUBLE_EQ(GpuShareFactor(0.9, 1, 1.0, 0.05), 1.0); }

TEST(GpuShareFactor, RunsThatFitTheCapacityPayOnlyTheSwitchOverhead) {
  EXPECT_DOUBLE_EQ(GpuShareFactor(0.8, 2, 1.0, 0.05), 0.95);
  EXPECT_DOUBLE_EQ(GpuShareFactor(0.9, 3, 1.0, 0.1), 0.9 * 0.9);
}

TEST(GpuShareFactor, OversubscribedComputeIsSharedInProportion) {
  // Two runs of 0.8: each gets 1/1.6 of its solo speed, less one switch overhead.
  EXPECT_DOUBLE_EQ(GpuShareFactor(1.6, 2, 1.0, 0.05), 0.625 * 0.95);
  EXPECT_DOUBLE_EQ(GpuShareFactor(1.6, 2, 2.0, 0.0), 1.0);
}

TEST(HostCpuFactor, SlowsEveryoneWhenCoresAreOversubscribed) {
  EXPECT_DOUBLE_EQ(HostCpuFactor(32, 64), 1.0);
  EXPECT_DOUBLE_EQ(HostCpuFactor(64, 64), 1.0);
  EXPECT_DOUBLE_EQ(HostCpuFactor(128, 64), 0.5);
}

TEST(Validate, AcceptsWellFormedRuns) {
  EXPECT_TRUE(Validate(SimConfig{}, {Small(), Small()}));
  EXPECT_TRUE(Validate(SimConfig{}, {}));
}

TEST(Validate, RejectsARunThatCannotFitAlone) {
  SimRun r = Small();
  r.mem_gib = 70;
  r.peak_gib = 81;
  Status st = Validate(SimConfig{}, {Small(), r});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().exit_code, kExitUsage);
  EXPECT_NE(st.message().find("run 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("even alone"), std::string::npos) << st.message();
}

TEST(Validate, RejectsOutOfRangeRunFields) {
  auto with = [](auto edit) {
    SimRun r = Small();
    edit(r);
    return Validate(SimConfig{}, {r});
  };
  EXPECT_FALSE(with([](SimRun& r) { r.duration_s = 0; }));
  EXPECT_FALSE(with([](SimRun& r) { r.peak_gib = r.mem_gib - 1; }));
  EXPECT_FALSE(with([](SimRun& r) { r.gpu_util = 0; }));
  EXPECT_FALSE(with([](SimRun& r) { r.gpu_util = 1.5; }));
  EXPECT_FALSE(with([](SimRun& r) { r.cpu_cores = -1; }));
  EXPECT_FALSE(with([](SimRun& r) { r.startup_s = -1; }));
  EXPECT_FALSE(with([](SimRun& r) { r.mem_gib = 0; }));
}

TEST(Validate, NamesTheFieldTheValueAndTheRange) {
  SimRun r = Small();
  r.id = "a";
  r.peak_gib = r.mem_gib - 1;
  EXPECT_EQ(Validate(SimConfig{}, {Small(), r}).message(),
            fmt::format("run 1 ('a'): peak_gib {:g} must be at least {:g} (its mem_gib)", r.peak_gib, r.mem_gib));
  r = Small();
  r.id = "b";
  r.gpu_util = 1.5;
  EXPECT_EQ(Validate(SimConfig{}, {r}).message(), "run 0 ('b'): gpu_util 1.5 must be in (0, 1]");
  SimConfig c;
  c.switch_overhead = 1;
  EXPECT_EQ(Validate(c, {}).message(), "switch overhead 1 must be in [0, 1)");
  c = SimConfig{};
  c.oom_retry_s = std::nan("");
  EXPECT_EQ(Validate(c, {}).message(), "OOM retry delay (s) nan must be positive");
}

TEST(Validate, RejectsOutOfRangeClusters) {
  auto with = [](auto edit) {
    SimConfig c;
    edit(c);
    return Validate(c, {});
  };
  EXPECT_FALSE(with([](SimConfig& c) { c.gpus = 0; }));
  EXPECT_FALSE(with([](SimConfig& c) { c.gpus_per_node = 0; }));
  EXPECT_FALSE(with([](SimConfig& c) { c.switch_overhead = 1; }));
  EXPECT_FALSE(with([](SimConfig& c) { c.oom_retry_s = 0; }));
  EXPECT_FALSE(with([](SimConfig& c) { c.cpu_cores_per_node = 0; }));
}

}  // namespace
}  // namespace sat::sim
