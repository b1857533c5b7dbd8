// What a Slurm job of a sweep asks for: the spec's request (or a whole GPU) until its shape is measured, then
// what the shape was measured to use with a margin: --cpus-per-task from the tree's CPU use, --mem from its
// peak RSS, and part of a GPU (--gres=shard:K or --gres=mps:P) from its peak GPU memory over the GPU's memory.
// A run that ran out of memory asks for twice as much per such failure (the "OOM bump").
//
// Pure arithmetic; no I/O. Units: bytes, CPU percent (100 = one core busy), MiB where Slurm takes MiB.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/slurm_spec.h"

namespace sat::slurm {

// The generic resources a partition's nodes define (the node with the most GPUs speaks for the partition).
struct PartitionGres {
  int gpus_per_node = 0;
  int shards_per_node = 0;  // Slurm's `shard` GRES, over all of a node's GPUs
  int mps_per_node = 0;     // Slurm's `mps` GRES, over all of a node's GPUs
  int cpus_per_node = 0;    // 0: unknown
  uint64_t mem_per_node_bytes = 0;  // 0: unknown
  int shards_per_gpu() const { return gpus_per_node > 0 ? shards_per_node / gpus_per_node : 0; }
  int mps_per_gpu() const { return gpus_per_node > 0 ? mps_per_node / gpus_per_node : 0; }
};

// What a shape's runs were measured to use: the largest of each over its measured attempts.
struct ShapeUsage {
  std::optional<double> cpu_pct;
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> gpu_mem_bytes;    // peak GPU memory of the run's processes
  std::optional<uint64_t> gpu_total_bytes;  // the memory of the GPU it ran on
  std::optional<double> gpu_util_pct;       // its GPU's utilisation while it had the GPU alone (100 = busy)
  void Merge(const ShapeUsage& other);
  bool measured() const { return cpu_pct || rss_bytes || gpu_mem_bytes; }
};

// One job's request. Exactly one of gpus, shards, mps is non-zero when the run uses a GPU.
struct SlurmRequest {
  int gpus = 0, shards = 0, mps = 0;
  std::optional<int> cpus;          // --cpus-per-task; unset: Slurm's default
  std::optional<uint64_t> mem_mib;  // --mem in MiB; unset: Slurm's default
  bool sized = false;               // from measurement (else the spec's request)
  int oom_bumps = 0;                // how many out-of-memory failures doubled it
  // The share of one GPU the request holds (1 per whole GPU), for GPU-hours; 0 without a GPU.
  double gpu_fraction = 0;

  // "gpu:1", "shard:3", "mps:25", or "" without a GPU.
  std::string Gres() const;
  // The sbatch options for this request: --gres, --cpus-per-task, --mem.
  std::vector<std::string> SbatchOptions() const;
  nlohmann::json ToJson() const;
  static SlurmRequest FromJson(const nlohmann::json& j);  // what ToJson wrote; defaults for missing fields
  bool operator==(const SlurmRequest& o) const = default;
};

// The way a sized run asks for part of a GPU on this partition: the spec's choice, or for kAuto shard, then mps,
// then a whole GPU by what the partition defines. Usage error when the spec asks for shard or mps and the
// partition does not define it, naming what it has.
Result<sweep::GpuShare> ResolveShare(sweep::GpuShare wanted, const PartitionGres& gres, const std::string& partition);

// The request of a run whose shape is not measured yet: the spec's cpus and mem, and its GPUs (default: one
// where the partition has GPUs), each GPU whole. `oom_bumps` doubles the memory request that many times
// (when the spec gives one).
SlurmRequest DefaultRequest(const sweep::SlurmSpec& spec, const PartitionGres& gres, int oom_bumps = 0);

// The request of a run of a measured shape:
//   cpus  = max(1, ceil(cpu_pct / 100 x (1 + margin))), at most the node's CPUs;
//   mem   = max(kMinMemMib, ceil(rss x (1 + margin) x 2^oom_bumps)) in MiB;
//   GPU   (when the default request has one, and the usage has GPU memory and the GPU's size):
//           share = max(gpu_mem x (1 + margin) x 2^oom_bumps / gpu_total, gpu_util / 100): memory with a margin
//           (exceeding it fails), compute as measured alone (exceeding it slows the GPU's runs down);
//           shard: K = ceil(share x shards per GPU), mps: P = ceil(share x mps per GPU), at least 1; a share
//           that needs the whole GPU (K or P reaching the GPU's count) asks for the GPU itself.
// What was not measured keeps the default request's value.
SlurmRequest SizedRequest(const sweep::SlurmSpec& spec, const PartitionGres& gres, sweep::GpuShare share,
                          const ShapeUsage& usage, int oom_bumps);

inline constexpr uint64_t kMinMemMib = 64;

}  // namespace sat::slurm
