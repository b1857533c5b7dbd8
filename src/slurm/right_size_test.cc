#include "slurm/right_size.h"

#include <gtest/gtest.h>

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

constexpr uint64_t kGiB = 1ULL << 30, kMiB = 1ULL << 20;

PartitionGres Gpus(int gpus, int shards, int mps) {
  PartitionGres g;
  g.gpus_per_node = gpus;
  g.shards_per_node = shards;
  g.mps_per_node = mps;
  g.cpus_per_node = 32;
  return g;
}

ShapeUsage Usage(double cpu_pct, uint64_t rss, std::optional<uint64_t> gpu_mem, std::optional<uint64_t> total) {
  ShapeUsage u;
  u.cpu_pct = cpu_pct;
  u.rss_bytes = rss;
  u.gpu_mem_bytes = gpu_mem;
  u.gpu_total_bytes = total;
  return u;
}

TEST(RightSize, UnmeasuredRunsAskForAWholeGpuOrTheSpecsRequest) {
  SlurmSpec spec;
  SlurmRequest r = DefaultRequest(spec, Gpus(4, 32, 0));
  EXPECT_EQ(r.Gres(), "gpu:1");
  EXPECT_EQ(r.gpu_fraction, 1);
  EXPECT_FALSE(r.cpus);
  EXPECT_FALSE(r.sized);
  EXPECT_EQ(r.SbatchOptions(), std::vector<std::string>{"--gres=gpu:1"});
  // No GPUs in the partition: no GPU asked.
  EXPECT_EQ(DefaultRequest(spec, Gpus(0, 0, 0)).Gres(), "");
  spec.cpus = 4;
  spec.mem_bytes = 2 * kGiB;
  spec.gpus = 2;
  r = DefaultRequest(spec, Gpus(4, 32, 0));
  EXPECT_EQ(r.SbatchOptions(), (std::vector<std::string>{"--gres=gpu:2", "--cpus-per-task=4", "--mem=2048M"}));
  // An out-of-memory failure doubles the spec's memory.
  EXPECT_EQ(DefaultRequest(spec, Gpus(4, 32, 0), 1).mem_mib, 4096u);
}

TEST(RightSize, CpuAndMemoryFromMeasurementWithTheMargin) {
  SlurmSpec spec;
  spec.margin = 0.25;
  spec.cpus = 8;
  // 1.5 cores x 1.25 = 1.875 -> 2; 400 MiB x 1.25 = 500 MiB.
  SlurmRequest r = SizedRequest(spec, Gpus(0, 0, 0), GpuShare::kGpu, Usage(150, 400 * kMiB, {}, {}), 0);
  EXPECT_TRUE(r.sized);
  EXPECT_EQ(r.cpus, 2);
  EXPECT_EQ(r.mem_mib, 500u);
  EXPECT_EQ(r.Gres(), "");
  // Exactly on a boundary does not round up: 0.8 cores x 1.25 = 1.
  EXPECT_EQ(SizedRequest(spec, Gpus(0, 0, 0), GpuShare::kGpu, Usage(80, kMiB, {}, {}), 0).cpus, 1);
  // A tiny RSS still asks for the floor; a huge CPU use is capped at the node's CPUs.
  r = SizedRequest(spec, Gpus(0, 0, 0), GpuShare::kGpu, Usage(9000, kMiB, {}, {}), 0);
  EXPECT_EQ(r.mem_mib, kMinMemMib);
  EXPECT_EQ(r.cpus, 32);
}

TEST(RightSize, ShardsFromMeasuredGpuMemory) {
  SlurmSpec spec;
  spec.margin = 0.25;
  const PartitionGres g = Gpus(4, 32, 0);  // 8 shards per GPU
  // 18 GiB x 1.25 = 22.5 GiB of 80 GiB = 0.28 -> 2.25 shards -> 3.
  SlurmRequest r = SizedRequest(spec, g, GpuShare::kShard, Usage(100, kGiB, 18 * kGiB, 80 * kGiB), 0);
  EXPECT_EQ(r.Gres(), "shard:3");
  EXPECT_DOUBLE_EQ(r.gpu_fraction, 3.0 / 8);
  EXPECT_EQ(r.gpus, 0);
  // The OOM bump doubles the memory share: 45 GiB -> 4.5 -> 5 shards.
  EXPECT_EQ(SizedRequest(spec, g, GpuShare::kShard, Usage(100, kGiB, 18 * kGiB, 80 * kGiB), 1).Gres(), "shard:5");
  // Needing the whole GPU asks for the GPU.
  r = SizedRequest(spec, g, GpuShare::kShard, Usage(100, kGiB, 70 * kGiB, 80 * kGiB), 0);
  EXPECT_EQ(r.Gres(), "gpu:1");
  EXPECT_EQ(r.gpu_fraction, 1);
  // Without the GPU's size (no NVML on the node) the GPU stays whole.
  EXPECT_EQ(SizedRequest(spec, g, GpuShare::kShard, Usage(100, kGiB, 18 * kGiB, {}), 0).Gres(), "gpu:1");
}

TEST(RightSize, TheComputeShareMeasuredAloneCountsToo) {
  SlurmSpec spec;
  spec.margin = 0.25;
  ShapeUsage u = Usage(100, kGiB, 8 * kGiB, 80 * kGiB);  // memory alone: 0.125 -> 1 shard
  EXPECT_EQ(SizedRequest(spec, Gpus(4, 32, 0), GpuShare::kShard, u, 0).Gres(), "shard:1");
  u.gpu_util_pct = 45;  // busy 45% of the time alone: 3.6 of 8 shards -> 4
  EXPECT_EQ(SizedRequest(spec, Gpus(4, 32, 0), GpuShare::kShard, u, 0).Gres(), "shard:4");
}

TEST(RightSize, MpsShareFromMeasuredGpuMemory) {
  SlurmSpec spec;
  spec.margin = 0;
  SlurmRequest r = SizedRequest(spec, Gpus(2, 0, 200), GpuShare::kMps, Usage(100, kGiB, 20 * kGiB, 80 * kGiB), 0);
  EXPECT_EQ(r.Gres(), "mps:25");
  EXPECT_DOUBLE_EQ(r.gpu_fraction, 0.25);
}

TEST(RightSize, ShareIsResolvedAgainstThePartition) {
  EXPECT_EQ(*ResolveShare(GpuShare::kAuto, Gpus(4, 32, 400), "gpu"), GpuShare::kShard);
  EXPECT_EQ(*ResolveShare(GpuShare::kAuto, Gpus(4, 0, 400), "gpu"), GpuShare::kMps);
  EXPECT_EQ(*ResolveShare(GpuShare::kAuto, Gpus(4, 0, 0), "gpu"), GpuShare::kGpu);
  auto missing = ResolveShare(GpuShare::kShard, Gpus(4, 0, 0), "gpu");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "saturate.slurm.share is shard, but partition 'gpu' defines no shard GRES (its nodes have gpu:4, shard:0, "
            "mps:0)");
}

TEST(RightSize, RequestsRoundTripThroughJson) {
  SlurmRequest r;
  r.shards = 3;
  r.cpus = 2;
  r.mem_mib = 500;
  r.sized = true;
  r.oom_bumps = 1;
  r.gpu_fraction = 0.375;
  EXPECT_EQ(SlurmRequest::FromJson(r.ToJson()), r);
  EXPECT_EQ(SlurmRequest::FromJson(nlohmann::json::parse("not json", nullptr, false)), SlurmRequest{});
}

TEST(RightSize, UsageKeepsTheLargest) {
  ShapeUsage a = Usage(100, 10, 5, 80);
  a.Merge(Usage(50, 20, {}, {}));
  EXPECT_EQ(a.cpu_pct, 100);
  EXPECT_EQ(a.rss_bytes, 20u);
  EXPECT_EQ(a.gpu_mem_bytes, 5u);
  EXPECT_FALSE(ShapeUsage{}.measured());
}

}  // namespace
}  // namespace sat::slurm
