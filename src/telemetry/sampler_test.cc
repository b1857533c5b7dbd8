#include "telemetry/sampler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "util/test_dir.h"

extern char** environ;

namespace sat::telemetry {
namespace {

using std::chrono::steady_clock;

std::unique_ptr<Sampler> MakeSampler(SamplerOptions options = {}) {
  Result<std::unique_ptr<Sampler>> sampler = Sampler::Create(std::move(options));
  EXPECT_TRUE(sampler) << sampler.error().message;
  return *std::move(sampler);
}

bool Contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// Polls `done` every 5 ms for up to `limit`; the limits are generous, so a slow machine does not fail.
template <class Pred>
bool WaitFor(Pred done, std::chrono::seconds limit = std::chrono::seconds(10)) {
  auto deadline = steady_clock::now() + limit;
  while (!done()) {
    if (steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A GPU backend that reports one GPU whose process list holds this test process; it stands at the GpuBackend
// seam to check what the sampler does with GPU samples, not to imitate NVML.
class OneGpuHoldingThisProcess : public GpuBackend {
 public:
  unsigned DeviceCount() const override { return 1; }
  std::vector<GpuSample> Sample(const std::vector<unsigned>& indices) override {
    last_indices = indices;
    GpuSample gpu;
    gpu.processes = {{::getpid(), 1ull << 30}, {::getpid() + 100000, 5}};
    return {gpu};
  }
  std::string Description() const override { return "one GPU"; }
  std::vector<unsigned> last_indices;
};

TEST(Sampler, RejectsBadOptions) {
  SamplerOptions options;
  options.interval_s = 0.005;
  Result<std::unique_ptr<Sampler>> fast = Sampler::Create(options);
  ASSERT_FALSE(fast);
  EXPECT_EQ(fast.error().exit_code, kExitUsage);
  EXPECT_NE(fast.error().message.find("0.01"), std::string::npos);

  options.interval_s = 1;
  options.capacity = 0;
  EXPECT_FALSE(Sampler::Create(options));

  options.capacity = 10;
  options.roots.proc = "/no/such/proc";
  EXPECT_FALSE(Sampler::Create(options));

  options.roots.proc = "/proc";
  options.interval_s = Sampler::kMinIntervalS;
  EXPECT_TRUE(Sampler::Create(options));
}

TEST(Sampler, SampleOnceFillsHostRatesFromTheSecondSampleOn) {
  std::unique_ptr<Sampler> sampler = MakeSampler();
  Sample first = sampler->SampleOnce();
  EXPECT_GT(first.time_s, 1.6e9);
  EXPECT_GT(first.mono_s, 0);
  EXPECT_FALSE(first.host.cpu_util_pct.has_value());
  EXPECT_TRUE(first.host.mem_total_bytes.has_value());
  EXPECT_GE(first.host.cpu_count, 1u);
  EXPECT_FALSE(first.tree.has_value());
  EXPECT_TRUE(first.gpus.empty());

  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Sample second = sampler->SampleOnce();
  EXPECT_GT(second.mono_s, first.mono_s);
  ASSERT_TRUE(second.host.cpu_util_pct.has_value());
  EXPECT_GE(*second.host.cpu_util_pct, 0);
  EXPECT_LE(*second.host.cpu_util_pct, 100);
  EXPECT_EQ(sampler->Latest()->mono_s, second.mono_s);
}

TEST(Sampler, ReadsTheCpuPackagesEnergyFromTheSysRoot) {
  // A powercap tree with one package, as the kernel lays it out under /sys.
  const TempDir dir;
  const std::string sys = dir.File("sys");
  const std::string zone = sys + "/class/powercap/intel-rapl:0";
  std::filesystem::create_directories(zone);
  auto write = [&](uint64_t uj) { std::ofstream(zone + "/energy_uj") << uj << "\n"; };
  std::ofstream(zone + "/max_energy_range_uj") << 262143328850ull << "\n";
  write(7000000);
  SamplerOptions options;
  options.roots.sys = sys;
  auto sampler = Sampler::Create(options);
  ASSERT_TRUE(sampler) << sampler.error().message;
  EXPECT_EQ((*sampler)->SampleOnce().host.cpu_energy_j, 0.0);
  write(7000000 + 2500000);
  EXPECT_EQ((*sampler)->SampleOnce().host.cpu_energy_j, 2.5);

  SamplerOptions none;
  none.roots.sys = sys + "/none";
  auto without = Sampler::Create(none);
  ASSERT_TRUE(without);
  EXPECT_FALSE((*without)->SampleOnce().host.cpu_energy_j.has_value()) << "no RAPL is n/a, not 0";
}

TEST(Sampler, WatchedTreeIncludesASpawnedChild) {
  std::unique_ptr<Sampler> sampler = MakeSampler();
  sampler->Watch(::getpid());
  Sample before = sampler->SampleOnce();
  ASSERT_TRUE(before.tree.has_value());
  EXPECT_TRUE(before.tree->alive);
  EXPECT_EQ(before.tree->pids.front(), ::getpid());
  EXPECT_FALSE(before.tree->cpu_pct.has_value());
  EXPECT_FALSE(before.tree->gpu_memory_bytes.has_value());  // no GPU backend

  pid_t child = 0;
  char sleep_arg0[] = "sleep", sleep_arg1[] = "30";
  char* argv[] = {sleep_arg0, sleep_arg1, nullptr};
  ASSERT_EQ(::posix_spawnp(&child, "sleep", nullptr, nullptr, argv, environ), 0);
  Sample with_child = sampler->SampleOnce();
  ASSERT_TRUE(with_child.tree.has_value());
  EXPECT_TRUE(Contains(with_child.tree->pids, child));
  EXPECT_GE(with_child.tree->process_count, 2u);
  EXPECT_TRUE(with_child.tree->cpu_pct.has_value());

  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  Sample after = sampler->SampleOnce();
  EXPECT_FALSE(Contains(after.tree->pids, child));

  sampler->Unwatch();
  EXPECT_FALSE(sampler->SampleOnce().tree.has_value());
  // Watching again starts afresh: no rates from a baseline taken before the pause.
  sampler->Watch(::getpid());
  Sample again = sampler->SampleOnce();
  ASSERT_TRUE(again.tree.has_value());
  EXPECT_TRUE(again.tree->alive);
  EXPECT_FALSE(again.tree->cpu_pct.has_value());
}

TEST(Sampler, AWatchedPidThatDoesNotExistIsNotAlive) {
  std::unique_ptr<Sampler> sampler = MakeSampler();
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  sampler->Watch(child);
  Sample s = sampler->SampleOnce();
  ASSERT_TRUE(s.tree.has_value());
  EXPECT_FALSE(s.tree->alive);
  EXPECT_EQ(s.tree->root, child);
}

TEST(Sampler, PassesGpuSelectionAndFindsTheTreesGpuMemory) {
  OneGpuHoldingThisProcess gpu;
  SamplerOptions options;
  options.gpu = &gpu;
  options.gpu_indices = {0};
  std::unique_ptr<Sampler> sampler = MakeSampler(options);
  sampler->Watch(::getpid());
  Sample s = sampler->SampleOnce();
  EXPECT_EQ(gpu.last_indices, (std::vector<unsigned>{0}));
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.tree->gpu_memory_bytes, 1ull << 30);
}

TEST(Sampler, RingBufferKeepsTheNewestSamples) {
  SamplerOptions options;
  options.capacity = 3;
  std::unique_ptr<Sampler> sampler = MakeSampler(options);
  std::vector<double> times;
  for (int i = 0; i < 5; ++i) times.push_back(sampler->SampleOnce().mono_s);
  std::vector<Sample> kept = sampler->Snapshot();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].mono_s, times[2]);
  EXPECT_EQ(kept[2].mono_s, times[4]);
  std::vector<Sample> recent = sampler->Since(times[3]);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].mono_s, times[3]);
  EXPECT_TRUE(sampler->Since(times[4] + 1).empty());
  EXPECT_EQ(sampler->Stats().ticks, 5u);
}

TEST(Sampler, ThreadTicksAndCallsTheCallback) {
  std::atomic<int> calls{0};
  std::atomic<bool> on_other_thread{false};
  std::thread::id test_thread = std::this_thread::get_id();
  SamplerOptions options;
  options.interval_s = 0.01;
  options.on_sample = [&](const Sample&) {
    on_other_thread = std::this_thread::get_id() != test_thread;
    ++calls;
  };
  std::unique_ptr<Sampler> sampler = MakeSampler(options);
  ASSERT_TRUE(sampler->Start());
  EXPECT_TRUE(sampler->running());
  EXPECT_FALSE(sampler->Start());
  EXPECT_TRUE(WaitFor([&] { return calls >= 5; }));
  sampler->Stop();
  EXPECT_FALSE(sampler->running());
  int after_stop = calls;
  EXPECT_TRUE(on_other_thread);
  EXPECT_EQ(sampler->Stats().ticks, static_cast<uint64_t>(after_stop));
  EXPECT_EQ(sampler->Snapshot().size(), static_cast<size_t>(after_stop));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(calls, after_stop);

  // It can be started again.
  ASSERT_TRUE(sampler->Start());
  EXPECT_TRUE(WaitFor([&] { return calls > after_stop; }));
}

TEST(Sampler, StopIsPromptWithALongInterval) {
  std::atomic<int> calls{0};
  SamplerOptions options;
  options.interval_s = 60;
  options.on_sample = [&](const Sample&) { ++calls; };
  std::unique_ptr<Sampler> sampler = MakeSampler(options);
  ASSERT_TRUE(sampler->Start());
  ASSERT_TRUE(WaitFor([&] { return calls == 1; }));  // the first tick is immediate
  auto before = steady_clock::now();
  sampler->Stop();
  EXPECT_LT(steady_clock::now() - before, std::chrono::seconds(5));
  EXPECT_EQ(calls, 1);
}

TEST(Sampler, TheCallbackMayStopTheSampler) {
  std::atomic<int> calls{0};
  Sampler* self = nullptr;
  SamplerOptions options;
  options.interval_s = 0.01;
  options.on_sample = [&](const Sample&) {
    if (++calls == 3) self->Stop();
  };
  std::unique_ptr<Sampler> sampler = MakeSampler(options);
  self = sampler.get();
  ASSERT_TRUE(sampler->Start());
  EXPECT_TRUE(WaitFor([&] { return !sampler->running(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(calls, 3);
  ASSERT_TRUE(sampler->Start());  // joins the thread that ended itself
  sampler->Stop();
}

TEST(Sampler, SkipsTheSlotsATickOverranInsteadOfCatchingUp) {
  std::atomic<int> calls{0};
  SamplerOptions options;
  options.interval_s = 0.02;
  // The second tick (slot 1, at 20 ms) runs past 90 ms: slots 2, 3 and 4 are skipped and the next tick is slot 5.
  options.on_sample = [&](const Sample&) {
    if (++calls == 2) std::this_thread::sleep_for(std::chrono::milliseconds(70));
  };
  std::unique_ptr<Sampler> sampler = MakeSampler(options);
  ASSERT_TRUE(sampler->Start());
  ASSERT_TRUE(WaitFor([&] { return calls >= 4; }));
  sampler->Stop();
  EXPECT_GE(sampler->Stats().skipped_slots, 3u);
  EXPECT_EQ(sampler->Stats().ticks, static_cast<uint64_t>(calls.load()));
}

TEST(Sampler, CollectionIsCheap) {
  std::unique_ptr<Sampler> sampler = MakeSampler();
  sampler->Watch(::getpid());
  constexpr int kTicks = 50;
  for (int i = 0; i < kTicks; ++i) sampler->SampleOnce();
  SamplerStats stats = sampler->Stats();
  // The budget is 0.5 ms a tick (0.5% of a core at 10 Hz); ten times that leaves room for a loaded machine.
  EXPECT_LT(stats.collect_cpu_s / kTicks, 0.005) << stats.collect_cpu_s / kTicks;
  EXPECT_GT(ProcessCpuSeconds(), 0);
}

}  // namespace
}  // namespace sat::telemetry
