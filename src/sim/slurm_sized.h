// What `saturate sweep --slurm` does, on the simulator's cluster (Policy::kSlurmSized in sim/policy.h): Slurm
// places jobs, saturate only sizes their requests.
//   - each GPU is `shards_per_gpu` shards (Slurm's `shard` GRES); a whole-GPU job holds all of them;
//   - a shape's first run (its probe) asks for a whole GPU and a GPU's share of its node's cores; the shape's
//     other runs wait until the probe is measured (warm-up after its start of training, or its end), then ask for
//     K = ceil(max(mem x (1 + margin) x 2^ooms / GPU memory, gpu_util) x shards_per_gpu) shards (the probe had
//     its GPU alone, so the GPU's utilisation was its own; a whole GPU when K reaches the GPU's count) and
//     ceil(cores x (1 + margin)) cores;
//   - Slurm's side: waiting jobs in submission order, each taking the GPU with the fewest free shards that fit
//     (best fit) on a node with the cores it asks for; a job that fits nowhere lets later ones go first
//     (backfill). Shards do not limit memory: runs whose peaks collide run out of memory as the cluster's model
//     says, and such a run is queued again asking for twice the memory (as the backend does).
// Nothing measures interference: runs that fit by memory share a GPU even when their compute collides, as
// shards allow.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "sim/cluster.h"
#include "sim/policy.h"

namespace sat::sim {

// A measured shape's request on the simulated cluster: what slurm/right_size.h's SizedRequest asks of Slurm, in the
// simulator's units (a test holds the two together: sim/slurm_sizing_agreement_test.cc).
struct SizedShards {
  int shards = 0;      // of `shards_per_gpu`; all of them is a whole GPU
  double cores = 0;
};
SizedShards SizeMeasured(double mem_gib, double gpu_util, double cpu_cores, double gpu_mem_gib, int shards_per_gpu,
                         double cores_per_node, double margin, int ooms);

class SlurmSized final : public Scheduler {
 public:
  // `params` must have passed ValidateParams.
  SlurmSized(const Cluster& cluster, const PolicyParams& params);

  bool WantsMeasurements() const override { return true; }
  void OnReady(Cluster& cluster, int run) override;
  void OnMeasured(Cluster& cluster, int run) override;
  void OnOom(Cluster& cluster, int run, int gpu) override;
  void OnFinished(Cluster& cluster, int run, int gpu) override;
  void Dispatch(Cluster& cluster) override;

 private:
  struct Shape {
    bool measured = false;
    double mem_gib = 0, cpu_cores = 0, gpu_util = 0;  // the largest measured
    int probes = 0;                     // unsized runs launched and not yet measured or ended
  };
  struct Request {
    int shards = 0;
    double cores = 0;
  };
  Request RequestOf(const Cluster& cluster, int run) const;
  void Learn(const Cluster& cluster, int run);
  void Release(const Cluster& cluster, int run, int gpu);
  void SetFree(int gpu, int shards);

  PolicyParams params_;
  int shards_per_gpu_;
  std::vector<Shape> shapes_;
  std::vector<Request> held_;      // per run: what its current attempt holds
  std::vector<int> ooms_;          // per run
  std::vector<char> probing_;      // per run: launched as its shape's probe, not yet measured
  std::vector<int> free_shards_;   // per GPU
  std::vector<double> free_cores_;  // per node
  std::set<std::pair<int, int>> open_;  // (free shards, GPU) for GPUs with any
  std::set<int> waiting_;
};

}  // namespace sat::sim
