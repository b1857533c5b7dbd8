// The sampler: one Sample per tick (host, selected GPUs, and optionally a watched process tree), kept in a bounded
// ring buffer. Either a background thread ticks on a fixed schedule (Start/Stop), or the caller ticks itself
// (SampleOnce), e.g. the single-threaded monitor loop. Both run the same collection code.
//
// Threads: the accessors (Snapshot, Since, Latest, Stats) and Watch/Unwatch may be called from any thread at any
// time. Start, Stop and running are for the owning thread. Collection is serialised by a mutex, so SampleOnce
// while the thread runs is safe (it interleaves with the thread's ticks). The GpuBackend is used only while that
// mutex is held; nobody else may use it while a Sampler holds it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "telemetry/gpu.h"
#include "telemetry/proc_tree.h"
#include "telemetry/procfs.h"
#include "telemetry/rapl.h"
#include "telemetry/sample.h"
#include "util/result.h"

namespace sat::telemetry {

struct SamplerOptions {
  double interval_s = 1.0;            // between ticks of the thread; at least Sampler::kMinIntervalS
  size_t capacity = 3600;             // samples kept; the oldest is dropped beyond this
  ProcRoots roots;                    // /proc and /sys, or fixture trees
  GpuBackend* gpu = nullptr;          // not owned, must outlive the Sampler; nullptr: no GPU fields
  std::vector<unsigned> gpu_indices;  // GPUs to sample; empty: every GPU
  // Called with every new sample, after it is stored: on the sampler thread for thread ticks, on the caller's
  // thread for SampleOnce. Calls never overlap. It runs inside the collection lock, so it must not call
  // SampleOnce; it may call anything else, including Stop (which then only asks the thread to end). It delays the
  // next tick by as long as it runs.
  std::function<void(const Sample&)> on_sample;
};

struct SamplerStats {
  uint64_t ticks = 0;          // samples taken, by the thread and by SampleOnce
  uint64_t skipped_slots = 0;  // schedule slots passed over because a tick ran past them
  double collect_cpu_s = 0;    // CPU time the collecting threads spent in ticks (thread CPU clocks)
};

class Sampler {
 public:
  static constexpr double kMinIntervalS = 0.01;

  // Checks the options (interval, capacity, a readable <proc>/stat); usage errors for bad values.
  static Result<std::unique_ptr<Sampler>> Create(SamplerOptions options);
  ~Sampler();  // stops the thread
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Starts the thread: a tick now, then at start + k * interval for k = 1, 2, ... (no drift); a tick that runs
  // past later slots skips them rather than catching up. Error when already running.
  Status Start();
  // Wakes the thread and joins it; returns within one tick's collection time. Idempotent.
  void Stop();
  bool running() const;

  // Takes one sample now, stores it and calls on_sample, exactly as a thread tick does, and returns it.
  Sample SampleOnce();

  // Watches the tree rooted at `root` (> 0) from the next tick on; the first tick of a new root has no rates.
  void Watch(pid_t root);
  void Unwatch();
  // The watched tree's processes that train (they report steps): never counted as DataLoader workers, even when
  // they are forked copies of their launcher. Cleared by Unwatch.
  void SetTrainers(std::vector<pid_t> pids);

  std::vector<Sample> Snapshot() const;            // oldest first
  std::vector<Sample> Since(double mono_s) const;  // samples with mono_s >= the given time, oldest first
  std::optional<Sample> Latest() const;
  SamplerStats Stats() const;
  double interval_s() const { return options_.interval_s; }

 private:
  explicit Sampler(SamplerOptions options);
  void Run(std::chrono::steady_clock::time_point start);
  Sample Tick();
  Sample Collect();

  const SamplerOptions options_;
  const long ticks_per_s_;
  std::atomic<pid_t> watched_{0};
  std::mutex trainers_mu_;
  std::vector<pid_t> trainers_;  // guarded by trainers_mu_

  // Collection state, guarded by collect_mu_.
  std::mutex collect_mu_;
  HostReader host_reader_;
  RaplCounter rapl_;  // the CPU packages' energy (HostSample::cpu_energy_j)
  ProcTreeReader tree_reader_;
  std::optional<HostCounters> prev_host_;
  std::optional<TreeCounters> prev_tree_;
  double prev_host_mono_s_ = 0, prev_tree_mono_s_ = 0;

  // Stored samples and stats, guarded by buffer_mu_.
  mutable std::mutex buffer_mu_;
  std::deque<Sample> buffer_;
  SamplerStats stats_;

  // The thread's lifecycle, guarded by state_mu_ (thread_ itself belongs to the owning thread).
  mutable std::mutex state_mu_;
  std::condition_variable stop_cv_;
  bool stop_requested_ = false;
  std::thread thread_;
};

// CLOCK_MONOTONIC in seconds: the clock of Sample::mono_s.
double MonotonicSeconds();
// CPU time (user + system) this whole process has used, in seconds; cheap (one clock_gettime), for measuring
// the sampler's own overhead.
double ProcessCpuSeconds();

}  // namespace sat::telemetry
