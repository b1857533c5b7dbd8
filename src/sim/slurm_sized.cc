#include "sim/slurm_sized.h"

#include <algorithm>
#include <cmath>

namespace sat::sim {

SlurmSized::SlurmSized(const Cluster& cluster, const PolicyParams& params)
    : params_(params),
      shards_per_gpu_(params.shards_per_gpu),
      shapes_(cluster.shape_count()),
      held_(cluster.run_count()),
      ooms_(cluster.run_count(), 0),
      probing_(cluster.run_count(), 0),
      free_cores_(cluster.node_count(), cluster.config().cpu_cores_per_node) {
  for (int gpu = 0; gpu < cluster.config().gpus; ++gpu) {
    free_shards_.push_back(shards_per_gpu_);
    open_.insert({shards_per_gpu_, gpu});
  }
}

SizedShards SizeMeasured(double mem_gib, double gpu_util, double cpu_cores, double gpu_mem_gib, int shards_per_gpu,
                         double cores_per_node, double margin, int ooms) {
  const double grow = 1 + margin;
  // The larger of the memory share and the compute share: the probe had its GPU alone, so the GPU's
  // utilisation then was the shape's own.
  const double share = std::max(mem_gib * grow * std::pow(2.0, ooms) / gpu_mem_gib, gpu_util);
  const int shards = std::clamp(static_cast<int>(std::ceil(share * shards_per_gpu - 1e-9)), 1, shards_per_gpu);
  const double cores = std::min(cores_per_node, std::max(1.0, std::ceil(cpu_cores * grow - 1e-9)));
  return SizedShards{shards, cores};
}

SlurmSized::Request SlurmSized::RequestOf(const Cluster& cluster, int run) const {
  const SimConfig& config = cluster.config();
  const Shape& shape = shapes_[cluster.shape_of(run)];
  if (!shape.measured) {
    return Request{shards_per_gpu_, config.cpu_cores_per_node / config.gpus_per_node};
  }
  const SizedShards sized = SizeMeasured(shape.mem_gib, shape.gpu_util, shape.cpu_cores, config.gpu_mem_gib,
                                         shards_per_gpu_, config.cpu_cores_per_node, params_.slurm_margin, ooms_[run]);
  return Request{sized.shards, sized.cores};
}

void SlurmSized::SetFree(int gpu, int shards) {
  open_.erase({free_shards_[gpu], gpu});
  free_shards_[gpu] = shards;
  if (shards > 0) open_.insert({shards, gpu});
}

void SlurmSized::OnReady(Cluster&, int run) { waiting_.insert(run); }

void SlurmSized::Learn(const Cluster& cluster, int run) {
  Shape& shape = shapes_[cluster.shape_of(run)];
  if (probing_[run]) {
    probing_[run] = 0;
    --shape.probes;
  }
  shape.measured = true;
  shape.mem_gib = std::max(shape.mem_gib, cluster.run(run).mem_gib);
  shape.cpu_cores = std::max(shape.cpu_cores, cluster.run(run).cpu_cores);
  shape.gpu_util = std::max(shape.gpu_util, cluster.run(run).gpu_util);
}

void SlurmSized::OnMeasured(Cluster& cluster, int run) { Learn(cluster, run); }

void SlurmSized::Release(const Cluster& cluster, int run, int gpu) {
  SetFree(gpu, free_shards_[gpu] + held_[run].shards);
  free_cores_[cluster.node_of(gpu)] += held_[run].cores;
  held_[run] = Request{};
}

void SlurmSized::OnOom(Cluster& cluster, int run, int gpu) {
  // A probe that failed before it was measured leaves its shape unsized; the next run probes again.
  if (probing_[run]) {
    probing_[run] = 0;
    --shapes_[cluster.shape_of(run)].probes;
  }
  ++ooms_[run];
  Release(cluster, run, gpu);
}

void SlurmSized::OnFinished(Cluster& cluster, int run, int gpu) {
  // A run that ended before its warm-up was watched all its life: its footprint is known.
  if (probing_[run]) Learn(cluster, run);
  Release(cluster, run, gpu);
}

void SlurmSized::Dispatch(Cluster& cluster) {
  for (auto it = waiting_.begin(); it != waiting_.end() && !open_.empty();) {
    const int run = *it;
    Shape& shape = shapes_[cluster.shape_of(run)];
    if (!shape.measured && shape.probes > 0) {
      ++it;
      continue;
    }
    const Request want = RequestOf(cluster, run);
    // Best fit: the GPU with the fewest free shards that still fit, on a node with the cores.
    int chosen = -1;
    for (auto g = open_.lower_bound({want.shards, -1}); g != open_.end(); ++g) {
      if (free_cores_[cluster.node_of(g->second)] + 1e-9 >= want.cores) {
        chosen = g->second;
        break;
      }
    }
    if (chosen < 0) {
      ++it;
      continue;
    }
    it = waiting_.erase(it);
    SetFree(chosen, free_shards_[chosen] - want.shards);
    free_cores_[cluster.node_of(chosen)] -= want.cores;
    held_[run] = want;
    if (!shape.measured) {
      probing_[run] = 1;
      ++shape.probes;
    }
    cluster.Launch(run, chosen);
  }
}

}  // namespace sat::sim
