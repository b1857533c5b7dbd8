// The packing policies `saturate simulate` compares, their knobs, and what a simulation of one returns.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace sat::sim {

enum class Policy {
  // One run at a time per node, on its first GPU: a for-loop on each machine.
  kSequential,
  // One run per GPU: a W&B agent per GPU, plain Slurm with --gpus=1.
  kOnePerGpu,
  // `fixed_k` runs per GPU regardless of memory (GNU parallel job slots, Ray Tune fractional GPUs). Runs that
  // do not fit fail with OOM and are retried.
  kFixedK,
  // task-spooler's GPU mode: start a run on the GPU with the most free memory when that free memory is at
  // least `free_fraction` of the GPU, as seen at that instant. A run's memory shows only after its start-up,
  // so several runs admitted meanwhile (all of them in one instant) see the same free memory and can
  // overshoot into OOM.
  kThreshold,
  // saturate's measured packing: a run alone on each GPU first; another run joins a GPU only when every run
  // there has been measured (staggered admissions), the measured memory plus the newcomer's (its shape's
  // largest measurement) fits with `margin`, and the node's CPU stays under `cpu_limit`. After each
  // admission the GPU's progress rate is compared with the rate before: below `min_gain` that mix of shapes
  // is poor and never formed again (for one shape: its degree is held one lower). An OOM lowers that GPU's
  // degree and re-queues the run. Details in sim/measured_packing.h.
  kMeasured,
  // `saturate sweep --slurm`: Slurm places jobs on GPUs cut into `shards_per_gpu` shards; a shape's first run
  // asks for a whole GPU, its other runs, once it is measured, for the shards its memory needs with
  // `slurm_margin`. Not in AllPolicies (the default comparison); name it with --policy. Details in
  // sim/slurm_sized.h.
  kSlurmSized,
};

// The policies compared by default, in the order reports list them (kSlurmSized is asked for by name).
const std::vector<Policy>& AllPolicies();
// "sequential", "one-per-gpu", "fixed-k", "threshold", "saturate", "slurm-sized".
std::string_view PolicyName(Policy policy);
// Parses a name as PolicyName writes it; a usage error with a suggestion otherwise.
Result<Policy> ParsePolicy(std::string_view name);

struct PolicyParams {
  int fixed_k = 2;             // kFixedK: runs per GPU
  double free_fraction = 0.5;  // kThreshold: share of GPU memory that must look free; in (0, 1]
  int max_runs_per_gpu = 4;    // kThreshold, kMeasured: never more runs than this on one GPU
  double margin = 0.10;        // kMeasured: (measured + newcomer) × (1 + margin) must fit
  double min_gain = 0.05;      // kMeasured: keep growing while the progress rate rises at least this much
  double cpu_limit = 0.9;      // kMeasured: admit only while node cores wanted stay within this share
  int shards_per_gpu = 8;      // kSlurmSized: Slurm `shard` GRES per GPU
  double slurm_margin = 0.25;  // kSlurmSized: sized requests are measured x (1 + margin)
};

// Usage error when a knob is out of range.
Status ValidateParams(const PolicyParams& params);

struct PolicyResult {
  Policy policy = Policy::kSequential;
  double makespan_s = 0;  // from the first launch until the last run finishes
  double gpu_hours = 0;   // GPU-seconds during which the GPU held at least one run, / 3600
  // Time-average, over all GPUs and the makespan, of the share of time each GPU runs kernels:
  // min(1, min(sum of training runs' utilisations, gpu_capacity) × host CPU factor).
  double mean_occupancy = 0;
  double mean_runs_per_busy_gpu = 0;  // run-seconds on GPUs / busy GPU-seconds (start-up included)
  int max_runs_on_a_gpu = 0;
  long oom_events = 0;
  int runs_completed = 0;
  int runs_total = 0;
  long events = 0;  // simulation events processed, for benchmarks
  // kMeasured: the degree held per shape on GPUs holding only that shape, for shapes where growth stopped.
  std::map<std::string, int> held_degree;
};

}  // namespace sat::sim
