#include "sim/simulate.h"

#include <memory>
#include <numeric>

#include "sim/baselines.h"
#include "sim/cluster.h"
#include "sim/measured_packing.h"
#include "sim/slurm_sized.h"

namespace sat::sim {

namespace {

std::vector<int> AllGpus(const SimConfig& config) {
  std::vector<int> gpus(config.gpus);
  std::iota(gpus.begin(), gpus.end(), 0);
  return gpus;
}

std::vector<int> FirstGpuOfEachNode(const Cluster& cluster) {
  std::vector<int> gpus;
  for (int node = 0; node < cluster.node_count(); ++node) gpus.push_back(cluster.first_gpu_of_node(node));
  return gpus;
}

PolicyResult Summarize(Policy policy, const Cluster& cluster, const ClusterTotals& totals) {
  PolicyResult r;
  r.policy = policy;
  r.makespan_s = totals.makespan_s;
  r.gpu_hours = totals.busy_gpu_s / 3600;
  double available_gpu_s = totals.makespan_s * cluster.config().gpus;
  r.mean_occupancy = available_gpu_s > 0 ? totals.occupancy_gpu_s / available_gpu_s : 0;
  r.mean_runs_per_busy_gpu = totals.busy_gpu_s > 0 ? totals.run_gpu_s / totals.busy_gpu_s : 0;
  r.max_runs_on_a_gpu = totals.max_runs_on_a_gpu;
  r.oom_events = totals.oom_events;
  r.runs_completed = totals.completed;
  r.runs_total = cluster.run_count();
  r.events = totals.events;
  return r;
}

}  // namespace

Result<PolicyResult> Simulate(const SimConfig& config, const std::vector<SimRun>& runs, Policy policy,
                              const PolicyParams& params) {
  if (Status st = Validate(config, runs); !st) return st.error();
  if (Status st = ValidateParams(params); !st) return st.error();
  Cluster cluster(config, runs);
  std::unique_ptr<Scheduler> scheduler;
  MeasuredPacking* measured = nullptr;
  switch (policy) {
    case Policy::kSequential:
      scheduler = MakeSlotScheduler(cluster, FirstGpuOfEachNode(cluster), 1);
      break;
    case Policy::kOnePerGpu:
      scheduler = MakeSlotScheduler(cluster, AllGpus(config), 1);
      break;
    case Policy::kFixedK:
      scheduler = MakeSlotScheduler(cluster, AllGpus(config), params.fixed_k);
      break;
    case Policy::kThreshold:
      scheduler = MakeThresholdScheduler(cluster, params.free_fraction, params.max_runs_per_gpu);
      break;
    case Policy::kMeasured: {
      auto packing = std::make_unique<MeasuredPacking>(cluster, params);
      measured = packing.get();
      scheduler = std::move(packing);
      break;
    }
    case Policy::kSlurmSized:
      scheduler = std::make_unique<SlurmSized>(cluster, params);
      break;
  }
  Result<ClusterTotals> totals = cluster.Run(*scheduler);
  if (!totals) return totals.error();
  PolicyResult result = Summarize(policy, cluster, *totals);
  if (measured != nullptr) result.held_degree = measured->HeldDegrees(cluster);
  return result;
}

Result<std::vector<PolicyResult>> SimulateAll(const SimConfig& config, const std::vector<SimRun>& runs,
                                              const std::vector<Policy>& policies, const PolicyParams& params) {
  std::vector<PolicyResult> results;
  for (Policy policy : policies) {
    Result<PolicyResult> r = Simulate(config, runs, policy, params);
    if (!r) return r.error();
    results.push_back(*std::move(r));
  }
  return results;
}

}  // namespace sat::sim
