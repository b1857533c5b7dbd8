#include "sim/baselines.h"

#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace sat::sim {

namespace {

// GPUs ordered by a key that changes as runs come and go; a GPU without a key is not a candidate.
// Keys must be unique, so each one ends with the GPU number.
template <class Key>
class GpuIndex {
 public:
  explicit GpuIndex(int gpus) : keys_(gpus) {}
  void Set(int gpu, std::optional<Key> key) {
    if (keys_[gpu]) ordered_.erase(*keys_[gpu]);
    keys_[gpu] = std::move(key);
    if (keys_[gpu]) ordered_.insert(*keys_[gpu]);
  }
  bool empty() const { return ordered_.empty(); }
  const Key& front() const { return *ordered_.begin(); }

 private:
  std::vector<std::optional<Key>> keys_;
  std::set<Key> ordered_;
};

int PopFirst(std::set<int>& waiting) {
  int run = *waiting.begin();
  waiting.erase(waiting.begin());
  return run;
}

class SlotScheduler final : public Scheduler {
 public:
  SlotScheduler(const Cluster& cluster, std::vector<int> gpus, int slots)
      : slots_(slots), open_(cluster.config().gpus) {
    for (int gpu : gpus) Refresh(cluster, gpu);
  }
  void OnReady(Cluster&, int run) override { waiting_.insert(run); }
  void OnOom(Cluster& cluster, int, int gpu) override { Refresh(cluster, gpu); }
  void OnFinished(Cluster& cluster, int, int gpu) override { Refresh(cluster, gpu); }
  void Dispatch(Cluster& cluster) override {
    while (!waiting_.empty() && !open_.empty()) {
      int gpu = open_.front().second;
      cluster.Launch(PopFirst(waiting_), gpu);
      Refresh(cluster, gpu);
    }
  }

 private:
  // Only GPUs given to the constructor are ever refreshed, so only they are ever candidates.
  void Refresh(const Cluster& cluster, int gpu) {
    int n = static_cast<int>(cluster.runs_on(gpu).size());
    open_.Set(gpu, n < slots_ ? std::optional(std::pair(n, gpu)) : std::nullopt);
  }

  int slots_;
  std::set<int> waiting_;
  GpuIndex<std::pair<int, int>> open_;  // (runs on it, GPU) for GPUs with a free slot
};

class ThresholdScheduler final : public Scheduler {
 public:
  ThresholdScheduler(const Cluster& cluster, double free_fraction, int max_runs_per_gpu)
      : min_free_gib_(free_fraction * cluster.config().gpu_mem_gib),
        max_runs_(max_runs_per_gpu),
        open_(cluster.config().gpus) {
    for (int gpu = 0; gpu < cluster.config().gpus; ++gpu) Refresh(cluster, gpu);
  }
  void OnReady(Cluster&, int run) override { waiting_.insert(run); }
  void OnTraining(Cluster& cluster, int run) override { Refresh(cluster, cluster.gpu_of(run)); }
  void OnOom(Cluster& cluster, int, int gpu) override { Refresh(cluster, gpu); }
  void OnFinished(Cluster& cluster, int, int gpu) override { Refresh(cluster, gpu); }
  void Dispatch(Cluster& cluster) override {
    // Each check sees the memory of training runs only; a run launched a moment ago shows nothing yet.
    while (!waiting_.empty() && !open_.empty() && -std::get<0>(open_.front()) >= min_free_gib_) {
      int gpu = std::get<2>(open_.front());
      cluster.Launch(PopFirst(waiting_), gpu);
      Refresh(cluster, gpu);
    }
  }

 private:
  void Refresh(const Cluster& cluster, int gpu) {
    int n = static_cast<int>(cluster.runs_on(gpu).size());
    double free_gib = cluster.config().gpu_mem_gib - cluster.visible_mem_gib(gpu);
    open_.Set(gpu, n < max_runs_ ? std::optional(Key(-free_gib, n, gpu)) : std::nullopt);
  }

  using Key = std::tuple<double, int, int>;  // (-visible free GiB, runs on it, GPU)
  double min_free_gib_;
  int max_runs_;
  std::set<int> waiting_;
  GpuIndex<Key> open_;
};

}  // namespace

std::unique_ptr<Scheduler> MakeSlotScheduler(const Cluster& cluster, std::vector<int> gpus, int slots) {
  return std::make_unique<SlotScheduler>(cluster, std::move(gpus), slots);
}

std::unique_ptr<Scheduler> MakeThresholdScheduler(const Cluster& cluster, double free_fraction, int max_runs_per_gpu) {
  return std::make_unique<ThresholdScheduler>(cluster, free_fraction, max_runs_per_gpu);
}

}  // namespace sat::sim
