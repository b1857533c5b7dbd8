#include "sim/simulate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/test_runs.h"
#include "sim/workload.h"

namespace sat::sim {
namespace {

using testing::MakeRun;
using testing::OneNode;
using testing::Repeat;
using testing::Sim;


TEST(Simulate, TwoRunsThatFitFinishSoonerPackedByTheInterferenceFactor) {
  // Utilisations 0.4 + 0.4 fit one GPU, so each packed run pays only the 5% switch overhead.
  std::vector<SimRun> runs = Repeat(MakeRun("a", 1000, 10, 0.4), 2);
  SimConfig config = OneNode(1);
  EXPECT_DOUBLE_EQ(Sim(config, runs, Policy::kSequential).makespan_s, 2000);
  EXPECT_DOUBLE_EQ(Sim(config, runs, Policy::kOnePerGpu).makespan_s, 2000);
  EXPECT_NEAR(Sim(config, runs, Policy::kFixedK).makespan_s, 1000 / 0.95, 1e-6);
  EXPECT_NEAR(Sim(config, runs, Policy::kThreshold).makespan_s, 1000 / 0.95, 1e-6);
  // Without warm-up saturate measures the first run at once and admits the second at time 0.
  PolicyResult packed = Sim(config, runs, Policy::kMeasured);
  EXPECT_NEAR(packed.makespan_s, 1000 / 0.95, 1e-6);
  EXPECT_EQ(packed.max_runs_on_a_gpu, 2);
  EXPECT_EQ(packed.oom_events, 0);
  EXPECT_NEAR(packed.gpu_hours, 1000 / 0.95 / 3600, 1e-9);
  // Busy share 0.8 for the whole makespan.
  EXPECT_NEAR(packed.mean_occupancy, 0.8, 1e-9);
}

TEST(Simulate, MeasuredPackingAdmitsTheSecondRunOnlyAfterTheFirstIsWarm) {
  SimRun run = MakeRun("a", 1000, 10, 0.4);
  run.startup_s = 10;
  run.warmup_s = 100;
  std::vector<SimRun> runs = Repeat(run, 2);
  // A trains from 10 s, is measured at 110 s; B starts then and trains from 120 s, when A has done 110 s.
  // Shared at 0.95 each, A's last 890 s end at 120 + 890/0.95; B then has 110 s left alone.
  double a_end = 120 + 890 / 0.95;
  PolicyResult r = Sim(OneNode(1), runs, Policy::kMeasured);
  EXPECT_NEAR(r.makespan_s, a_end + 110, 1e-6);
  EXPECT_DOUBLE_EQ(Sim(OneNode(1), runs, Policy::kSequential).makespan_s, 2020);
  // The GPU was busy from the first launch to the end; two runs lived on it from 110 s to A's end.
  EXPECT_NEAR(r.mean_runs_per_busy_gpu * r.makespan_s, r.makespan_s + (a_end - 110), 1e-6);
}

TEST(Simulate, RunsThatDoNotFitTogetherNeverOomUnderSaturateButDoUnderFixedK) {
  SimRun run = MakeRun("big", 1005, 50, 0.5);
  run.startup_s = 10;
  std::vector<SimRun> runs = Repeat(run, 2);
  SimConfig config = OneNode(1);

  PolicyResult measured = Sim(config, runs, Policy::kMeasured);
  EXPECT_EQ(measured.oom_events, 0);
  EXPECT_DOUBLE_EQ(measured.makespan_s, 2030);
  EXPECT_EQ(measured.runs_completed, 2);

  // Fixed k=2: B fails at 10 s and every 40 s after (30 s back-off + 10 s start-up) while A trains until
  // 1015 s: at 10, 50, ..., 1010 s, 26 times. It starts for good at 1040 s and ends at 2055 s.
  PolicyResult fixed = Sim(config, runs, Policy::kFixedK);
  EXPECT_EQ(fixed.oom_events, 26);
  EXPECT_EQ(fixed.runs_completed, 2);
  EXPECT_DOUBLE_EQ(fixed.makespan_s, 2055);
  // The GPU sat empty from A's end (1015 s) until B's relaunch (1040 s).
  EXPECT_DOUBLE_EQ(fixed.gpu_hours * 3600, 2055 - 25);
}

TEST(Simulate, ThresholdOvershootsOnlyWhenAdmissionsShareAnInstant) {
  SimRun run = MakeRun("big", 1005, 50, 0.5);
  run.startup_s = 10;
  PolicyParams params;
  params.free_fraction = 0.5;
  // Both runs see 80 GiB free at time 0 and start: B's allocation fails. When B is retried at 40 s, A's
  // 50 GiB is visible (30 GiB free < 40 GiB) and B waits for A to end: no second OOM.
  PolicyResult r = Sim(OneNode(1), Repeat(run, 2), Policy::kThreshold, params);
  EXPECT_EQ(r.oom_events, 1);
  EXPECT_EQ(r.runs_completed, 2);
  EXPECT_DOUBLE_EQ(r.makespan_s, 1015 + 1015);
  // Runs that fit together race too, harmlessly.
  SimRun fits = MakeRun("small", 1000, 30, 0.4);
  EXPECT_EQ(Sim(OneNode(1), Repeat(fits, 2), Policy::kThreshold, params).oom_events, 0);
}

TEST(Simulate, OnePerGpuWithAsManyRunsAsGpusTakesTheLongestRun) {
  std::vector<SimRun> runs = {MakeRun("a", 100, 10, 0.5), MakeRun("b", 400, 10, 0.5), MakeRun("c", 250, 10, 0.5),
                              MakeRun("d", 300, 10, 0.5)};
  for (SimRun& r : runs) r.startup_s = 5;
  PolicyResult r = Sim(OneNode(4), runs, Policy::kOnePerGpu);
  EXPECT_DOUBLE_EQ(r.makespan_s, 405);
  EXPECT_DOUBLE_EQ(r.gpu_hours * 3600, 105 + 405 + 255 + 305);
  // Sequential uses one GPU of the one node: the sum.
  EXPECT_DOUBLE_EQ(Sim(OneNode(4), runs, Policy::kSequential).makespan_s, 1070);
}

TEST(Simulate, SequentialRunsOnePerNode) {
  SimConfig config = OneNode(4);
  config.gpus_per_node = 2;  // two nodes
  PolicyResult r = Sim(config, Repeat(MakeRun("a", 100, 10, 0.5), 4), Policy::kSequential);
  EXPECT_DOUBLE_EQ(r.makespan_s, 200);
  EXPECT_EQ(r.max_runs_on_a_gpu, 1);
}

TEST(Simulate, OversubscribedHostCoresSlowPackedRunsAndSaturateAvoidsThem) {
  SimConfig config = OneNode(1);
  config.cpu_cores_per_node = 4;
  SimRun run = MakeRun("a", 1000, 10, 0.2);
  run.cpu_cores = 4;
  std::vector<SimRun> runs = Repeat(run, 2);
  // Packed: 0.95 for the shared GPU, times 4/8 for the host.
  EXPECT_NEAR(Sim(config, runs, Policy::kFixedK).makespan_s, 1000 / (0.95 * 0.5), 1e-6);
  PolicyResult measured = Sim(config, runs, Policy::kMeasured);
  EXPECT_EQ(measured.max_runs_on_a_gpu, 1);
  EXPECT_DOUBLE_EQ(measured.makespan_s, 2000);
}

TEST(Simulate, NoRunsIsAnEmptyResult) {
  PolicyResult r = Sim(OneNode(2), {}, Policy::kMeasured);
  EXPECT_EQ(r.makespan_s, 0);
  EXPECT_EQ(r.runs_total, 0);
  EXPECT_EQ(r.mean_occupancy, 0);
}

TEST(Simulate, RejectsInvalidInputAsUsageErrors) {
  SimRun run = MakeRun("a", 100, 90, 0.5);
  Result<PolicyResult> r = Simulate(OneNode(1), {run}, Policy::kOnePerGpu, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().exit_code, kExitUsage);
  PolicyParams params;
  params.fixed_k = 0;
  EXPECT_FALSE(Simulate(OneNode(1), {}, Policy::kFixedK, params));
}

// --- invariants on generated workloads -------------------------------------------------------------------

struct Workload {
  SimConfig config;
  std::vector<SimRun> runs;
};

Workload Generated(int gpus, int runs, uint64_t seed) {
  WorkloadSpec spec;
  spec.runs = runs;
  spec.seed = seed;
  Workload w;
  w.config.gpus = gpus;
  w.runs = GenerateWorkload(spec);
  return w;
}

TEST(SimulateInvariants, EveryPolicyCompletesEveryRunWithinPhysicalBounds) {
  Workload w = Generated(16, 300, 7);
  double longest = 0;
  double kernel_s = 0;  // GPU-seconds of kernels the work needs at solo speed
  for (const SimRun& r : w.runs) {
    longest = std::max(longest, r.startup_s + r.duration_s);
    kernel_s += r.gpu_util * r.duration_s;
  }
  PolicyParams params;
  for (Policy policy : AllPolicies()) {
    SCOPED_TRACE(std::string(PolicyName(policy)));
    PolicyResult r = Sim(w.config, w.runs, policy, params);
    EXPECT_EQ(r.runs_completed, 300);
    EXPECT_EQ(r.runs_total, 300);
    EXPECT_GE(r.makespan_s, longest);
    double busy_s = r.gpu_hours * 3600;
    double occupied_s = r.mean_occupancy * w.config.gpus * r.makespan_s;
    EXPECT_LE(busy_s, w.config.gpus * r.makespan_s * (1 + 1e-9));
    EXPECT_LE(occupied_s, busy_s * (1 + 1e-9));
    // Interference only ever slows work down, so the kernels took at least their solo time.
    EXPECT_GE(occupied_s, kernel_s * (1 - 1e-9));
    EXPECT_GE(r.mean_runs_per_busy_gpu, 1.0 - 1e-9);
  }
}

TEST(SimulateInvariants, PoliciesRespectTheirDegreeLimits) {
  Workload w = Generated(16, 300, 11);
  PolicyParams params;
  params.fixed_k = 3;
  params.max_runs_per_gpu = 4;
  auto results = SimulateAll(w.config, w.runs, AllPolicies(), params);
  ASSERT_TRUE(results);
  for (const PolicyResult& r : *results) {
    SCOPED_TRACE(std::string(PolicyName(r.policy)));
    switch (r.policy) {
      case Policy::kSequential:
      case Policy::kOnePerGpu:
        EXPECT_EQ(r.max_runs_on_a_gpu, 1);
        EXPECT_EQ(r.oom_events, 0);
        break;
      case Policy::kFixedK:
        EXPECT_EQ(r.max_runs_on_a_gpu, 3);
        break;
      case Policy::kThreshold:
      case Policy::kMeasured:
        EXPECT_LE(r.max_runs_on_a_gpu, 4);
        break;
      case Policy::kSlurmSized:
        break;
    }
  }
}

TEST(SimulateInvariants, SameInputsGiveTheSameResultsBitForBit) {
  Workload a = Generated(8, 150, 3);
  Workload b = Generated(8, 150, 3);
  for (Policy policy : AllPolicies()) {
    PolicyResult x = Sim(a.config, a.runs, policy);
    PolicyResult y = Sim(b.config, b.runs, policy);
    EXPECT_EQ(x.makespan_s, y.makespan_s);
    EXPECT_EQ(x.gpu_hours, y.gpu_hours);
    EXPECT_EQ(x.mean_occupancy, y.mean_occupancy);
    EXPECT_EQ(x.oom_events, y.oom_events);
    EXPECT_EQ(x.events, y.events);
    EXPECT_EQ(x.held_degree, y.held_degree);
  }
  Workload c = Generated(8, 150, 4);
  EXPECT_NE(Sim(a.config, a.runs, Policy::kMeasured).makespan_s, Sim(c.config, c.runs, Policy::kMeasured).makespan_s);
}

TEST(SimulateInvariants, HundredGpusThousandRunsCompleteUnderEveryPolicy) {
  Workload w = Generated(100, 1000, 5);
  auto results = SimulateAll(w.config, w.runs, AllPolicies(), PolicyParams{});
  ASSERT_TRUE(results) << results.error().message;
  ASSERT_EQ(results->size(), AllPolicies().size());
  for (const PolicyResult& r : *results) EXPECT_EQ(r.runs_completed, 1000) << PolicyName(r.policy);
  // Packing with measurements beats one run per GPU on a sweep of mostly small runs.
  EXPECT_LT((*results)[4].makespan_s, (*results)[1].makespan_s);
}

}  // namespace
}  // namespace sat::sim
