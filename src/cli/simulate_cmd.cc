// `saturate simulate`: the packing policies on a modelled cluster (src/sim), compared on makespan, GPU-hours and
// out-of-memory events, for a generated sweep or a list of runs from a file.
#include <fmt/core.h>

#include <chrono>
#include <iostream>

#include "cli/command.h"
#include "sim/report.h"
#include "sim/simulate.h"
#include "sim/workload.h"
#include "util/atomic_file.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace sat::cli {
namespace {

struct SimulateCliOptions {
  sim::SimConfig config{.gpus = 64};
  sim::WorkloadSpec workload;
  sim::PolicyParams params;
  std::string runs_file, write_runs, policies, baseline = "one-per-gpu";
  bool json = false;
};

Result<std::vector<sim::Policy>> ParsePolicies(const std::string& list) {
  if (list.empty()) return sim::AllPolicies();
  std::vector<sim::Policy> policies;
  for (const std::string& name : Split(list, ',')) {
    auto policy = sim::ParsePolicy(Trim(name));
    if (!policy) return policy.error();
    policies.push_back(*policy);
  }
  return policies;
}

Status RunSimulate(SimulateCliOptions c) {
  auto policies = ParsePolicies(c.policies);
  if (!policies) return policies.error();
  auto baseline = sim::ParsePolicy(c.baseline);
  if (!baseline) return baseline.error();

  // The runs: a file, or a generated sweep whose memory shares are of this cluster's GPUs.
  std::vector<sim::SimRun> runs;
  if (!c.runs_file.empty()) {
    auto loaded = sim::LoadRuns(c.runs_file);
    if (!loaded) return loaded.error();
    runs = std::move(*loaded);
  } else {
    c.workload.gpu_mem_gib = c.config.gpu_mem_gib;
    if (auto s = sim::ValidateSpec(c.workload); !s) return s;
    runs = sim::GenerateWorkload(c.workload);
  }
  if (!c.write_runs.empty()) {
    if (Status st = WriteFileAtomically(c.write_runs, sim::RunsToJson(runs)); !st) return st;
  }

  const auto start = std::chrono::steady_clock::now();
  auto results = sim::SimulateAll(c.config, runs, *policies, c.params);
  if (!results) return results.error();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (c.json) {
    nlohmann::json doc = sim::ToJson(c.config, c.params, *results);
    doc["runs"] = runs.size();
    doc["wall_s"] = wall_s;
    std::cout << JsonText(doc, 2) << '\n';
  } else {
    std::cout << fmt::format("{} runs on {} GPUs ({} per node, {:g} GiB each, {:g} cores per node)\n\n", runs.size(),
                             c.config.gpus, c.config.gpus_per_node, c.config.gpu_mem_gib, c.config.cpu_cores_per_node)
              << sim::FormatTable(*results, *baseline)
              << fmt::format("\nsimulated {} polic{} in {:.2f} s\n", policies->size(),
                             policies->size() == 1 ? "y" : "ies", wall_s);
  }
  std::cout.flush();
  return Status::Ok();
}

}  // namespace

Action SetupSimulate(CLI::App& app) {
  auto c = std::make_shared<SimulateCliOptions>();
  sim::SimConfig& k = c->config;
  app.add_option("--gpus", k.gpus, "GPUs in the cluster (default 64)");
  app.add_option("--gpus-per-node", k.gpus_per_node, "GPUs per machine (default 8)");
  app.add_option("--gpu-mem", k.gpu_mem_gib, "GiB of memory per GPU (default 80)");
  app.add_option("--cores-per-node", k.cpu_cores_per_node, "CPU cores per machine (default 96)");
  app.add_option("--gpu-capacity", k.gpu_capacity, "sum of solo utilisations one GPU serves at full speed (1.0)");
  app.add_option("--switch-overhead", k.switch_overhead, "speed lost per extra run sharing a GPU (0.05)");
  app.add_option("--oom-retry", k.oom_retry_s, "seconds from an out-of-memory failure to the retry (30)");

  sim::WorkloadSpec& w = c->workload;
  app.add_option("--runs", w.runs, "runs in the generated sweep (default 1000)");
  app.add_option("--large-fraction", w.large_fraction, "share of large configurations (0.25)");
  app.add_option("--small-configs", w.small_configs, "distinct small configurations (4)");
  app.add_option("--large-configs", w.large_configs, "distinct large configurations (4)");
  app.add_option("--seed", w.seed, "the generator's seed (1)");
  app.add_option("--runs-file", c->runs_file, "read the runs from a JSON file instead (see --write-runs)");
  app.add_option("--write-runs", c->write_runs, "write the runs simulated to a JSON file, for editing");

  sim::PolicyParams& p = c->params;
  app.add_option("--policy", c->policies,
                 "policies to compare, comma-separated (default all: sequential, one-per-gpu, fixed-k, threshold, "
                 "saturate; also slurm-sized, the Slurm backend's right-sizing)");
  app.add_option("--baseline", c->baseline, "the policy speedups are relative to (one-per-gpu)");
  app.add_option("--fixed-k", p.fixed_k, "fixed-k: runs per GPU (2)");
  app.add_option("--free-fraction", p.free_fraction, "threshold: share of GPU memory that must look free (0.5)");
  app.add_option("--max-per-gpu", p.max_runs_per_gpu, "threshold, saturate: at most this many runs per GPU (4)");
  app.add_option("--margin", p.margin, "saturate: memory margin (0.1)");
  app.add_option("--min-gain", p.min_gain, "saturate: grow while the progress rate rises this much (0.05)");
  app.add_option("--cpu-limit", p.cpu_limit, "saturate: admit while node cores wanted stay within this share (0.9)");
  app.add_option("--shards-per-gpu", p.shards_per_gpu, "slurm-sized: Slurm shards per GPU (8)");
  app.add_option("--slurm-margin", p.slurm_margin, "slurm-sized: margin over measured memory and cores (0.25)");
  app.add_flag("--json", c->json, "print JSON instead of the table");
  return [c] { return RunSimulate(*c); };
}

}  // namespace sat::cli
