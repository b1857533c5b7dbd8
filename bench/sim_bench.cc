// `saturate simulate` at scale: 1,000 GPUs and 10,000 generated runs, each policy alone and all five in a
// row (the budget is 10 s for all five on a 2-core machine).
#include <benchmark/benchmark.h>

#include <string>

#include "sim/simulate.h"
#include "sim/workload.h"

namespace {

using sat::sim::AllPolicies;
using sat::sim::Policy;
using sat::sim::PolicyParams;
using sat::sim::SimConfig;
using sat::sim::SimRun;

const std::vector<SimRun>& TenThousandRuns() {
  static const std::vector<SimRun> runs = [] {
    sat::sim::WorkloadSpec spec;
    spec.runs = 10000;
    return sat::sim::GenerateWorkload(spec);
  }();
  return runs;
}

SimConfig ThousandGpus() {
  SimConfig config;
  config.gpus = 1000;
  return config;
}

void BM_SimulatePolicy(benchmark::State& state) {
  Policy policy = AllPolicies()[state.range(0)];
  state.SetLabel(std::string(sat::sim::PolicyName(policy)));
  const std::vector<SimRun>& runs = TenThousandRuns();
  SimConfig config = ThousandGpus();
  long events = 0;
  for (auto _ : state) {
    auto result = sat::sim::Simulate(config, runs, policy, PolicyParams{});
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    events = result->events;
    benchmark::DoNotOptimize(result);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulatePolicy)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

void BM_SimulateAllPolicies(benchmark::State& state) {
  const std::vector<SimRun>& runs = TenThousandRuns();
  SimConfig config = ThousandGpus();
  for (auto _ : state) {
    auto results = sat::sim::SimulateAll(config, runs, AllPolicies(), PolicyParams{});
    if (!results) {
      state.SkipWithError(results.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(results);
  }
}
BENCHMARK(BM_SimulateAllPolicies)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
