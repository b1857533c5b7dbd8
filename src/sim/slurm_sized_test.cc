#include "sim/slurm_sized.h"

#include <gtest/gtest.h>

#include "sim/simulate.h"
#include "sim/test_runs.h"
#include "sim/workload.h"

namespace sat::sim {
namespace {

using testing::MakeRun;
using testing::OneNode;
using testing::Repeat;
using testing::Sim;


TEST(SlurmSized, TheProbeRunsAloneUntilMeasuredThenSizedRunsShareTheGpu) {
  // 10 GiB x 1.25 = 12.5 GiB of 80 -> 1.25 of 8 shards -> 2 shards: four runs per GPU.
  SimRun run = MakeRun("small", 1000, 10, 0.2);
  run.warmup_s = 100;
  const std::vector<SimRun> runs = Repeat(run, 5);
  PolicyResult r = Sim(OneNode(1), runs, Policy::kSlurmSized);
  EXPECT_EQ(r.runs_completed, 5);
  EXPECT_EQ(r.oom_events, 0);
  // The probe holds the whole GPU until its warm-up ends; then 4 shards' worth of others cannot join it (it holds
  // all 8) until it finishes; the next four then share the GPU.
  EXPECT_EQ(r.max_runs_on_a_gpu, 4);
  EXPECT_LT(r.makespan_s, Sim(OneNode(1), runs, Policy::kOnePerGpu).makespan_s);
}

TEST(SlurmSized, ShardsBoundTheRunsPerGpu) {
  SimRun run = MakeRun("tiny", 500, 1, 0.05);
  PolicyParams params;
  params.shards_per_gpu = 4;
  PolicyResult r = Sim(OneNode(2), Repeat(run, 40), Policy::kSlurmSized, params);
  EXPECT_EQ(r.runs_completed, 40);
  EXPECT_LE(r.max_runs_on_a_gpu, 4);
}

TEST(SlurmSized, RunsThatOutgrowTheirShardsAreRetriedWithMore) {
  // Steady 10 GiB but peaks of 30 GiB: sized for 10, packed runs' peaks collide and run out of memory.
  SimRun run = MakeRun("spiky", 600, 10, 0.2);
  run.peak_gib = 30;
  run.startup_s = 5;
  PolicyResult r = Sim(OneNode(1), Repeat(run, 8), Policy::kSlurmSized);
  EXPECT_EQ(r.runs_completed, 8);
  EXPECT_GT(r.oom_events, 0);
}

TEST(SlurmSized, BeatsOneGpuPerRunOnAGeneratedSweep) {
  WorkloadSpec spec;
  spec.runs = 300;
  spec.seed = 3;
  SimConfig config;
  config.gpus = 16;
  const std::vector<SimRun> runs = GenerateWorkload(spec);
  PolicyResult sized = Sim(config, runs, Policy::kSlurmSized);
  PolicyResult whole = Sim(config, runs, Policy::kOnePerGpu);
  EXPECT_EQ(sized.runs_completed, 300);
  EXPECT_LT(sized.makespan_s, whole.makespan_s);
  EXPECT_LT(sized.gpu_hours, whole.gpu_hours);
}

TEST(SlurmSized, NamedButNotInTheDefaultComparison) {
  EXPECT_EQ(*ParsePolicy("slurm-sized"), Policy::kSlurmSized);
  for (Policy p : AllPolicies()) EXPECT_NE(p, Policy::kSlurmSized);
  PolicyParams params;
  params.shards_per_gpu = 0;
  EXPECT_FALSE(ValidateParams(params));
}

}  // namespace
}  // namespace sat::sim
