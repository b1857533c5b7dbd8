// The schedulers of the policies saturate is compared with. None of them measures anything: they place runs
// by slot counts or by the free memory visible at the instant of the decision.
#pragma once

#include <memory>
#include <vector>

#include "sim/cluster.h"

namespace sat::sim {

// Up to `slots` runs on each GPU listed in `gpus`, each waiting run (in submission order) going to the
// listed GPU with the fewest runs (lowest number on ties). Sequential is slots=1 on each node's first GPU,
// one-per-GPU slots=1 on every GPU, fixed-k slots=k on every GPU.
std::unique_ptr<Scheduler> MakeSlotScheduler(const Cluster& cluster, std::vector<int> gpus, int slots);

// task-spooler's GPU mode: each waiting run goes to the GPU with the most visible free memory (fewest runs,
// then lowest number, on ties) while that free memory is at least `free_fraction` of the GPU and the GPU
// holds fewer than `max_runs_per_gpu` runs. Visible free memory ignores runs still in start-up.
std::unique_ptr<Scheduler> MakeThresholdScheduler(const Cluster& cluster, double free_fraction, int max_runs_per_gpu);

}  // namespace sat::sim
