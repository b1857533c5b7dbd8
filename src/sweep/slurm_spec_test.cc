#include "sweep/slurm_spec.h"

#include <gtest/gtest.h>

#include "sweep/spec.h"

namespace sat::sweep {
namespace {

constexpr const char* kHead = "program: train.py\nmethod: grid\nparameters:\n  lr: {values: [0.1, 0.01]}\n";

TEST(SlurmSpec, TheSaturateSectionSelectsSlurmAndItsSettings) {
  auto spec = ParseSpec(std::string(kHead) +
                            "saturate:\n  backend: slurm\n  slurm:\n    partition: gpu\n    account: proj\n"
                            "    qos: high\n    time: 1h30m\n    options: [--constraint=a100, --exclusive=user]\n"
                            "    share: shard\n    gpus: 1\n    cpus: 8\n    mem: 32G\n    margin: 0.5\n"
                            "    probes: 2\n    poll: 500ms\n",
                        "s.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->saturate.backend, "slurm");
  const SlurmSpec& s = spec->saturate.slurm;
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.account, "proj");
  EXPECT_EQ(s.qos, "high");
  EXPECT_EQ(s.time_s, 5400);
  EXPECT_EQ(s.options, (std::vector<std::string>{"--constraint=a100", "--exclusive=user"}));
  EXPECT_EQ(s.share, GpuShare::kShard);
  EXPECT_EQ(s.gpus, 1);
  EXPECT_EQ(s.cpus, 8);
  EXPECT_EQ(s.mem_bytes, 32ULL << 30);
  EXPECT_EQ(s.margin, 0.5);
  EXPECT_EQ(s.probes, 2);
  EXPECT_EQ(s.poll_s, 0.5);
}

TEST(SlurmSpec, DefaultsAreLocal) {
  auto spec = ParseSpec(kHead, "s.yaml");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->saturate.backend, "local");
  EXPECT_EQ(spec->saturate.slurm.share, GpuShare::kAuto);
  EXPECT_EQ(spec->saturate.slurm.probes, 1);
}

TEST(SlurmSpec, ErrorsNameTheLineAndTheSetting) {
  auto bad = ParseSpec(std::string(kHead) + "saturate:\n  slurm:\n    partiton: gpu\n", "s.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "s.yaml:7:5: saturate.slurm: unknown key 'partiton' (did you mean 'partition'?)");
  EXPECT_EQ(bad.error().exit_code, kExitUsage);
  bad = ParseSpec(std::string(kHead) + "saturate:\n  slurm:\n    mem: lots\n", "s.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "s.yaml:7:10: saturate.slurm: 'mem' must be an amount like 32G or 1500M, not 'lots'");
  bad = ParseSpec(std::string(kHead) + "saturate:\n  slurm:\n    share: shards\n", "s.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown share 'shards'; one of auto, shard, mps, gpu (did you mean 'shard'?)"),
            std::string::npos)
      << bad.error().message;
}

// Slurm's time limit becomes sbatch --time and the wrapper's deadline: infinite or huge values are refused.
TEST(SlurmSpec, TimeIsFiniteAndBounded) {
  for (const char* bad : {"inf", "1e300", "100000h", "0"}) {
    auto spec = ParseSpec(std::string(kHead) + "saturate:\n  slurm:\n    time: " + bad + "\n", "s.yaml");
    ASSERT_FALSE(spec) << bad;
    EXPECT_NE(spec.error().message.find("'time' must be a duration above 0 and at most 366 days"), std::string::npos)
        << spec.error().message;
  }
}

TEST(SlurmSpec, MemoryAmountsAsSbatchTakesThem) {
  EXPECT_EQ(ParseSlurmMemory("1500M"), 1500ULL << 20);
  EXPECT_EQ(ParseSlurmMemory("2g"), 2ULL << 30);
  EXPECT_EQ(ParseSlurmMemory("4096"), 4096ULL << 20);
  EXPECT_EQ(ParseSlurmMemory("512K"), 512ULL << 10);
  EXPECT_FALSE(ParseSlurmMemory("12X"));
  EXPECT_FALSE(ParseSlurmMemory("-1G"));
  EXPECT_FALSE(ParseSlurmMemory(""));
}

}  // namespace
}  // namespace sat::sweep
