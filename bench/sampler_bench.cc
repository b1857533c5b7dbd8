// What one telemetry sample costs, and what share of a core the sampler thread takes at 10 Hz, with the host,
// a watched process tree (a python trainer-like parent with two worker children) and NVML (the stand-in library,
// as no GPU is here: its per-call cost is far below a real driver's, so the GPU share is a lower bound).
//
// Run: build/sampler_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "telemetry/nvml.h"
#include "telemetry/sampler.h"

namespace {

using sat::telemetry::MonotonicSeconds;
using sat::telemetry::ProcessCpuSeconds;

// A small process tree to watch: a shell whose two children sleep, like a trainer and two loader workers.
pid_t StartTree() {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "sleep 600 & sleep 600 & wait", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return pid;
}

void StopTree(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

std::unique_ptr<sat::telemetry::GpuBackend> FakeGpu() {
  auto g = sat::telemetry::OpenNvml(SATURATE_FAKE_NVML);
  if (!g) {
    fprintf(stderr, "%s\n", g.error().message.c_str());
    std::abort();
  }
  return std::move(*g);
}

// One SampleOnce: CPU time per sample for each combination of sources.
void BM_SampleOnce(benchmark::State& state) {
  bool tree = state.range(0), gpu = state.range(1);
  setpgid(0, 0);
  pid_t root = tree ? StartTree() : 0;
  auto backend = gpu ? FakeGpu() : nullptr;
  sat::telemetry::SamplerOptions o;
  o.gpu = backend.get();
  auto s = sat::telemetry::Sampler::Create(o);
  if (root) (*s)->Watch(root);
  (*s)->SampleOnce();
  double cpu0 = ProcessCpuSeconds();
  for (auto _ : state) benchmark::DoNotOptimize((*s)->SampleOnce());
  double cpu = ProcessCpuSeconds() - cpu0;
  state.counters["cpu_us_per_sample"] = cpu / state.iterations() * 1e6;
  state.SetLabel(std::string(tree ? "host+tree" : "host") + (gpu ? "+nvml" : ""));
  if (root) StopTree(root);
}
BENCHMARK(BM_SampleOnce)->Args({0, 0})->Args({1, 0})->Args({1, 1})->Unit(benchmark::kMicrosecond);

// The sampler thread at 10 Hz for 5 s: its share of one core (target < 0.5%).
void BM_SamplerThread10Hz(benchmark::State& state) {
  pid_t root = StartTree();
  auto backend = FakeGpu();
  for (auto _ : state) {
    sat::telemetry::SamplerOptions o;
    o.interval_s = 0.1;
    o.gpu = backend.get();
    auto s = sat::telemetry::Sampler::Create(o);
    (*s)->Watch(root);
    double wall0 = MonotonicSeconds();
    (void)(*s)->Start();
    std::this_thread::sleep_for(std::chrono::seconds(5));
    (*s)->Stop();
    double wall = MonotonicSeconds() - wall0;
    auto stats = (*s)->Stats();
    state.counters["ticks"] = stats.ticks;
    state.counters["core_share_pct"] = stats.collect_cpu_s / wall * 100;
    state.counters["cpu_us_per_tick"] = stats.collect_cpu_s / stats.ticks * 1e6;
  }
  StopTree(root);
}
BENCHMARK(BM_SamplerThread10Hz)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
