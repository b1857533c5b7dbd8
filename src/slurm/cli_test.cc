#include "slurm/cli.h"

#include <gtest/gtest.h>

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

TEST(SlurmCli, JobStatesAsSqueueAndScontrolPrintThem) {
  EXPECT_EQ(ParseJobState("PENDING"), JobState::kPending);
  EXPECT_EQ(ParseJobState("CONFIGURING"), JobState::kPending);
  EXPECT_EQ(ParseJobState("RUNNING"), JobState::kRunning);
  EXPECT_EQ(ParseJobState("COMPLETING"), JobState::kRunning);
  EXPECT_EQ(ParseJobState("CANCELLED+"), JobState::kCancelled);
  EXPECT_EQ(ParseJobState("CANCELLED by 0"), JobState::kCancelled);
  EXPECT_EQ(ParseJobState("TIMEOUT"), JobState::kTimeout);
  EXPECT_EQ(ParseJobState("NODE_FAIL"), JobState::kNodeFail);
  EXPECT_EQ(ParseJobState("OUT_OF_MEMORY"), JobState::kOutOfMemory);
  EXPECT_EQ(ParseJobState("PREEMPTED"), JobState::kPreempted);
  EXPECT_EQ(ParseJobState("SPECIAL_EXIT"), JobState::kUnknown);
  EXPECT_TRUE(JobActive(JobState::kPending));
  EXPECT_FALSE(JobActive(JobState::kCompleted));
}

TEST(SlurmCli, SqueueLinesAreSplitOnBars) {
  auto jobs = ParseSqueue(
      "41_0|sat-abc|RUNNING|None|node1|saturate:7,8\n41_1|sat-abc|PENDING|Resources||saturate:7,8\n\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, "41_0");
  EXPECT_EQ(jobs[0].name, "sat-abc");
  EXPECT_EQ(jobs[0].state, JobState::kRunning);
  EXPECT_EQ(jobs[0].nodes, "node1");
  EXPECT_EQ(jobs[0].comment, "saturate:7,8");
  EXPECT_EQ(jobs[1].state, JobState::kPending);
  EXPECT_EQ(jobs[1].reason, "Resources");
  EXPECT_TRUE(ParseSqueue("").empty());
}

TEST(SlurmCli, SbatchParsableIdWithOrWithoutCluster) {
  EXPECT_EQ(*ParseSbatchId("1234\n"), "1234");
  EXPECT_EQ(*ParseSbatchId("1234;cluster\n"), "1234");
  EXPECT_FALSE(ParseSbatchId("sbatch: error: invalid partition\n"));
}

TEST(SlurmCli, ScontrolOneLinerOfAnArrayTask) {
  const std::string line =
      "JobId=43 ArrayJobId=41 ArrayTaskId=2 JobName=sat-abc UserId=root(0) JobState=COMPLETED Reason=None "
      "Dependency=(null) ExitCode=1:0 RunTime=00:00:03 NodeList=n1 NumNodes=1 NumCPUs=2 NumTasks=1 "
      "TRES=cpu=2,mem=150M,node=1,billing=2 MinMemoryNode=150M TresPerNode=gres:shard:3 Command=/tmp/a b.sh\n";
  auto jobs = ParseScontrolJobs(line);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "41_2");
  EXPECT_EQ(jobs[0].state, JobState::kCompleted);
  EXPECT_EQ(jobs[0].exit_code, 1);
  EXPECT_EQ(jobs[0].term_signal, 0);
  EXPECT_EQ(jobs[0].nodes, "n1");
  EXPECT_EQ(jobs[0].cpus, 2);
  EXPECT_EQ(jobs[0].mem_mib, 150u);
  EXPECT_EQ(jobs[0].gres, "shard:3");
  // A value with spaces keeps them.
  EXPECT_EQ(ParseScontrolLine(line)["Command"], "/tmp/a b.sh");
}

TEST(SlurmCli, ScontrolPlainJobMemoryFromTres) {
  auto jobs = ParseScontrolJobs("JobId=7 JobName=x JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15 NodeList=(null) "
                                "TRES=cpu=1,mem=2G,node=1\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "7");
  EXPECT_EQ(jobs[0].state, JobState::kTimeout);
  EXPECT_EQ(jobs[0].term_signal, 15);
  EXPECT_EQ(jobs[0].nodes, "");
  EXPECT_EQ(jobs[0].mem_mib, 2048u);
  EXPECT_EQ(jobs[0].gres, "");
}

TEST(SlurmCli, GresCountsPerNode) {
  PartitionGres g;
  AddGres("gpu:a100:4(S:0-1),shard:a100:32,mps:400", &g);
  EXPECT_EQ(g.gpus_per_node, 4);
  EXPECT_EQ(g.shards_per_node, 32);
  EXPECT_EQ(g.mps_per_node, 400);
  EXPECT_EQ(g.shards_per_gpu(), 8);
  EXPECT_EQ(g.mps_per_gpu(), 100);
  PartitionGres none;
  AddGres("(null)", &none);
  EXPECT_EQ(none.gpus_per_node, 0);
  EXPECT_EQ(none.shards_per_gpu(), 0);
}

TEST(SlurmCli, SinfoPartitionsAndTheDefault) {
  auto parts = ParseSinfo("debug*|8|7000|(null)|up\ngpu|64|512000|gpu:2,shard:16|up\ngpu|32|256000|gpu:1|up\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "debug");
  EXPECT_TRUE(parts[0].is_default);
  EXPECT_EQ(parts[0].gres.cpus_per_node, 8);
  EXPECT_EQ(parts[0].gres.mem_per_node_bytes, 7000ULL << 20);
  EXPECT_EQ(parts[1].gres.gpus_per_node, 2);
  EXPECT_EQ(parts[1].gres.shards_per_node, 16);
  EXPECT_EQ(parts[1].gres.cpus_per_node, 64);
  EXPECT_EQ((*ChoosePartition(parts, "")).name, "debug");
  EXPECT_EQ((*ChoosePartition(parts, "gpu")).name, "gpu");
  auto missing = ChoosePartition(parts, "gpus");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().exit_code, kExitUsage);
  EXPECT_NE(missing.error().message.find("no partition 'gpus' (did you mean 'gpu'?); partitions: debug, gpu"),
            std::string::npos)
      << missing.error().message;
}

TEST(SlurmCli, MissingCommandsNameThePackage) {
  auto cli = SlurmCli::Find("/nonexistent");
  ASSERT_FALSE(cli);
  EXPECT_NE(cli.error().message.find("needs Slurm's sbatch on PATH"), std::string::npos) << cli.error().message;
  EXPECT_NE(cli.error().message.find("slurm-client"), std::string::npos);
}

}  // namespace
}  // namespace sat::slurm
