// `saturate simulate --policy slurm-sized` predicts what `saturate sweep --slurm` asks of Slurm: the simulator's
// sizing (sim/slurm_sized.h SizeMeasured) and the backend's (slurm/right_size.h SizedRequest) are two
// implementations of one formula, in two sets of units. This walks a grid of measured shapes through both and fails
// when they ask for different shards or cores.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/slurm_sized.h"
#include "slurm/right_size.h"

namespace sat::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(SlurmSizingAgreement, TheSimulatorAndTheBackendAskForTheSameShardsAndCores) {
  constexpr int kShardsPerGpu = 8, kCoresPerNode = 32, kGpusPerNode = 4;
  constexpr double kGpuMemGib = 80;
  slurm::PartitionGres gres;
  gres.gpus_per_node = kGpusPerNode;
  gres.shards_per_node = kShardsPerGpu * kGpusPerNode;
  gres.cpus_per_node = kCoresPerNode;
  int compared = 0;
  for (double margin : {0.0, 0.25, 0.5}) {
    for (double mem_gib : {0.5, 7.9, 10.0, 19.5, 33.0, 79.0}) {
      for (double util : {0.0, 0.12, 0.5, 0.99}) {
        for (double cores : {0.2, 1.0, 2.6, 40.0}) {
          for (int ooms : {0, 1, 2}) {
            const SizedShards sim = SizeMeasured(mem_gib, util, cores, kGpuMemGib, kShardsPerGpu, kCoresPerNode,
                                                 margin, ooms);
            sweep::SlurmSpec spec;
            spec.margin = margin;
            slurm::ShapeUsage usage;
            usage.cpu_pct = cores * 100;
            usage.rss_bytes = 1ull << 30;
            usage.gpu_mem_bytes = static_cast<uint64_t>(mem_gib * kGiB);
            usage.gpu_total_bytes = static_cast<uint64_t>(kGpuMemGib * kGiB);
            usage.gpu_util_pct = util * 100;
            const slurm::SlurmRequest real = slurm::SizedRequest(spec, gres, sweep::GpuShare::kShard, usage, ooms);
            // The backend asks for a whole GPU where the simulator holds all of a GPU's shards.
            const int real_shards = real.gpus == 1 ? kShardsPerGpu : real.shards;
            const std::string at = ::testing::PrintToString(std::make_tuple(margin, mem_gib, util, cores, ooms));
            EXPECT_EQ(sim.shards, real_shards) << at;
            ASSERT_TRUE(real.cpus) << at;
            EXPECT_EQ(sim.cores, *real.cpus) << at;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 3 * 6 * 4 * 4 * 3);
}

}  // namespace
}  // namespace sat::sim
