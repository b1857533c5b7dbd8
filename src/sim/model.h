// The model behind `saturate simulate`: what a training run and a cluster are, and how co-located runs slow
// each other down. Every quantity is deterministic; randomness lives only in the workload generator.
//
// A run's life on a GPU:
//   launch ──startup_s──> allocate ──warmup_s──> steady ── ... ──> finish
//   - start-up (imports, data loading, model construction) uses no GPU compute, no GPU memory and no host
//     CPU share; it only delays the run;
//   - at the end of start-up the run allocates its GPU memory. If the peaks of the runs already training on
//     the GPU plus the newcomer's peak exceed the GPU's memory (peaks are assumed to coincide, the worst
//     case), the newcomer fails with out-of-memory, frees its slot, and is queued again `oom_retry_s` later;
//   - from then on it trains: `duration_s` seconds of work at solo speed, whatever its speed is meanwhile;
//   - `warmup_s` after it starts training, its footprint (memory, CPU) and throughput are steady, so a
//     monitor can measure them (only saturate's measured packing uses measurements).
//
// Interference. Let n runs train on one GPU with solo utilisations u_1..u_n (share of time a kernel runs
// when alone). Each of them runs at
//     speed = min(1, gpu_capacity / sum(u)) × (1 - switch_overhead)^(n - 1) × host_cpu_factor
// times its solo speed, where host_cpu_factor = min(1, cpu_cores_per_node / cores wanted by all the runs
// training on that node's GPUs). Co-located runs therefore share one slowdown. A GPU's progress rate is the
// sum of its runs' speeds (each run's throughput over its solo throughput); packing pays when that sum
// exceeds 1.
//
// GPU memory, GPU compute and host CPU cores are modelled; host RAM, disk and network are not.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace sat::sim {

// One training run, as submitted. Runs are identified by their position in the list; the list order is the
// submission order every policy's queue follows.
struct SimRun {
  std::string id;
  // Runs of the same configuration share a shape; saturate learns a footprint per shape.
  std::string shape;
  double duration_s = 0;  // training time alone on a GPU, start-up excluded; > 0
  double mem_gib = 0;     // steady GPU memory once warmed up, as a monitor sees it; > 0
  double peak_gib = 0;    // most GPU memory the run ever holds; >= mem_gib
  double gpu_util = 0;    // solo GPU utilisation, in (0, 1]
  double cpu_cores = 1;   // host cores it keeps busy while training; >= 0
  double startup_s = 30;  // launch to memory allocation; >= 0
  double warmup_s = 60;   // training time before its footprint and throughput are steady; >= 0
};

// The machine(s). GPUs are numbered 0..gpus-1; node i holds GPUs [i*gpus_per_node, (i+1)*gpus_per_node).
struct SimConfig {
  int gpus = 8;
  int gpus_per_node = 8;
  double gpu_mem_gib = 80;
  double cpu_cores_per_node = 96;
  double gpu_capacity = 1.0;      // sum of solo utilisations one GPU serves at full speed
  double switch_overhead = 0.05;  // speed lost per extra run sharing a GPU (time-slicing, cache thrash)
  double oom_retry_s = 30;        // from an out-of-memory failure until the run is queued again
};

// Checks the config and that every run is well-formed and fits alone on one GPU (peak <= GPU memory), so
// every policy can complete every run. Errors are usage errors naming the run.
Status Validate(const SimConfig& config, const std::vector<SimRun>& runs);

// Speed of each of `n` runs training on one GPU whose solo utilisations sum to `sum_util`, as a fraction of
// solo speed, before host effects: min(1, capacity / sum_util) × (1 - switch_overhead)^(n - 1). 1 for n <= 1
// with sum_util <= capacity.
double GpuShareFactor(double sum_util, int n, double capacity, double switch_overhead);

// Host CPU slowdown of every run training on a node: min(1, cores_available / cores_wanted).
double HostCpuFactor(double cores_wanted, double cores_available);

}  // namespace sat::sim
