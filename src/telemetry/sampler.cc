#include "telemetry/sampler.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "util/thread_guard.h"

namespace sat::telemetry {
namespace {

// The Sampler whose thread is the current thread, so that Stop from on_sample does not join itself.
thread_local const Sampler* current_thread_sampler = nullptr;

double ClockSeconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

double MonotonicSeconds() { return ClockSeconds(CLOCK_MONOTONIC); }

double ProcessCpuSeconds() { return ClockSeconds(CLOCK_PROCESS_CPUTIME_ID); }

Result<std::unique_ptr<Sampler>> Sampler::Create(SamplerOptions options) {
  if (!std::isfinite(options.interval_s) || options.interval_s < kMinIntervalS) {
    return UsageError(
        fmt::format("sampling interval {}s is too short: the minimum is {}s", options.interval_s, kMinIntervalS));
  }
  if (options.capacity == 0) return UsageError("the sampler must keep at least one sample");
  std::string stat_path = options.roots.proc + "/stat";
  if (::access(stat_path.c_str(), R_OK) != 0) {
    return Error{fmt::format("cannot read {}: {}", stat_path, std::strerror(errno))};
  }
  return std::unique_ptr<Sampler>(new Sampler(std::move(options)));
}

Sampler::Sampler(SamplerOptions options)
    : options_(std::move(options)),
      ticks_per_s_(::sysconf(_SC_CLK_TCK)),
      host_reader_(options_.roots),
      rapl_(options_.roots.sys),
      tree_reader_(options_.roots.proc) {}

Sampler::~Sampler() { Stop(); }

Status Sampler::Start() {
  {
    std::lock_guard lock(state_mu_);
    if (thread_.joinable() && !stop_requested_) return Error{"the sampler is already running"};
  }
  // A thread that was asked to stop from its own callback has not been joined yet.
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(state_mu_);
    stop_requested_ = false;
  }
  const auto start = std::chrono::steady_clock::now();
  thread_ = std::thread([this, start] { GuardThread("sampler", [&] { Run(start); }); });
  return Status::Ok();
}

void Sampler::Stop() {
  {
    std::lock_guard lock(state_mu_);
    stop_requested_ = true;
  }
  stop_cv_.notify_all();
  if (current_thread_sampler == this) return;
  if (thread_.joinable()) thread_.join();
}

bool Sampler::running() const {
  std::lock_guard lock(state_mu_);
  return thread_.joinable() && !stop_requested_;
}

void Sampler::Run(std::chrono::steady_clock::time_point start) {
  current_thread_sampler = this;
  const std::chrono::duration<double> interval(options_.interval_s);
  uint64_t slot = 0;
  std::unique_lock lock(state_mu_);
  while (!stop_requested_) {
    lock.unlock();
    Tick();
    // The next slot on the grid start + k * interval that is still ahead; slots a slow tick ran past are skipped.
    uint64_t next = static_cast<uint64_t>((std::chrono::steady_clock::now() - start) / interval) + 1;
    if (next > slot + 1) {
      std::lock_guard buffer_lock(buffer_mu_);
      stats_.skipped_slots += next - slot - 1;
    }
    slot = next;
    auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval * slot);
    lock.lock();
    stop_cv_.wait_until(lock, deadline, [this] { return stop_requested_; });
  }
  current_thread_sampler = nullptr;
}

Sample Sampler::SampleOnce() { return Tick(); }

Sample Sampler::Tick() {
  std::lock_guard collect_lock(collect_mu_);
  double cpu_before = ClockSeconds(CLOCK_THREAD_CPUTIME_ID);
  Sample sample = Collect();
  double cpu_used = ClockSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
  {
    std::lock_guard lock(buffer_mu_);
    buffer_.push_back(sample);
    while (buffer_.size() > options_.capacity) buffer_.pop_front();
    ++stats_.ticks;
    stats_.collect_cpu_s += cpu_used;
  }
  if (options_.on_sample) options_.on_sample(sample);
  return sample;
}

Sample Sampler::Collect() {
  Sample s;
  s.time_s = ClockSeconds(CLOCK_REALTIME);
  s.mono_s = MonotonicSeconds();

  HostCounters host = host_reader_.Read();
  s.host = ComputeHostSample(prev_host_ ? &*prev_host_ : nullptr, host, s.mono_s - prev_host_mono_s_);
  s.host.cpu_energy_j = rapl_.Read();
  prev_host_ = std::move(host);
  prev_host_mono_s_ = s.mono_s;

  if (options_.gpu) s.gpus = options_.gpu->Sample(options_.gpu_indices);

  pid_t root = watched_.load();
  if (root <= 0) {
    // Nothing read while unwatched: a later Watch must not trust pids remembered from before the pause.
    if (prev_tree_) tree_reader_.Reset();
    prev_tree_.reset();
    return s;
  }
  TreeCounters tree = tree_reader_.Read(root);
  std::vector<pid_t> trainers;
  {
    std::lock_guard lock(trainers_mu_);
    trainers = trainers_;
  }
  ProcTreeSample tree_sample = ComputeTreeSample(prev_tree_ ? &*prev_tree_ : nullptr, tree,
                                                 s.mono_s - prev_tree_mono_s_, ticks_per_s_, trainers);
  if (tree_sample.alive) tree_sample.gpu_memory_bytes = TreeGpuMemory(tree_sample.pids, s.gpus);
  s.tree = std::move(tree_sample);
  prev_tree_ = std::move(tree);
  prev_tree_mono_s_ = s.mono_s;
  return s;
}

void Sampler::Watch(pid_t root) { watched_.store(root > 0 ? root : 0); }

void Sampler::Unwatch() {
  watched_.store(0);
  SetTrainers({});
}

void Sampler::SetTrainers(std::vector<pid_t> pids) {
  std::lock_guard lock(trainers_mu_);
  trainers_ = std::move(pids);
}

std::vector<Sample> Sampler::Snapshot() const {
  std::lock_guard lock(buffer_mu_);
  return std::vector<Sample>(buffer_.begin(), buffer_.end());
}

std::vector<Sample> Sampler::Since(double mono_s) const {
  std::lock_guard lock(buffer_mu_);
  auto first =
      std::lower_bound(buffer_.begin(), buffer_.end(), mono_s, [](const Sample& s, double t) { return s.mono_s < t; });
  return std::vector<Sample>(first, buffer_.end());
}

std::optional<Sample> Sampler::Latest() const {
  std::lock_guard lock(buffer_mu_);
  if (buffer_.empty()) return std::nullopt;
  return buffer_.back();
}

SamplerStats Sampler::Stats() const {
  std::lock_guard lock(buffer_mu_);
  return stats_;
}

}  // namespace sat::telemetry
