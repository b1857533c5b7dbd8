// The discrete-event core every policy runs on: GPUs, nodes, runs, the event queue, the interference model
// of sim/model.h, out-of-memory failures and the accounting behind PolicyResult. A Scheduler makes the
// decisions (which run, which GPU, when); the Cluster applies the physics.
//
// Cost: each event is O(log events) plus the runs on the GPUs it touches (a node's GPUs when the node's CPU
// slowdown changes). Nothing scans all GPUs or all runs per event. Single-threaded; not reusable after Run.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/model.h"
#include "util/result.h"

namespace sat::sim {

class Cluster;

// A policy's side. The cluster calls it in simulated-time order; the callbacks update the policy's own
// bookkeeping, and Dispatch, called once after all the events of an instant, launches runs.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // True to receive OnMeasured (warmup_s after a run starts training).
  virtual bool WantsMeasurements() const { return false; }
  // The run is waiting for a GPU: every run at time 0, in submission order, and a run again oom_retry_s
  // after it ran out of memory.
  virtual void OnReady(Cluster& cluster, int run) = 0;
  // The run allocated its memory and trains.
  virtual void OnTraining(Cluster& cluster, int run) {}
  virtual void OnMeasured(Cluster& cluster, int run) {}
  // The run ran out of memory while allocating on `gpu` and has left it.
  virtual void OnOom(Cluster& cluster, int run, int gpu) {}
  // The run finished on `gpu` and has left it.
  virtual void OnFinished(Cluster& cluster, int run, int gpu) {}
  // Launch runs (Cluster::Launch) for this instant.
  virtual void Dispatch(Cluster& cluster) = 0;
};

struct ClusterTotals {
  double makespan_s = 0;
  double busy_gpu_s = 0;       // GPU-seconds with at least one launched run
  double occupancy_gpu_s = 0;  // integral of each GPU's kernel-time share
  double run_gpu_s = 0;        // integral of the number of launched runs per GPU
  int max_runs_on_a_gpu = 0;
  long oom_events = 0;
  int completed = 0;
  long events = 0;
};

class Cluster {
 public:
  // `config` and `runs` must have passed Validate and must outlive the cluster.
  Cluster(const SimConfig& config, const std::vector<SimRun>& runs);

  // Simulates until every run has finished. An error if the scheduler leaves runs waiting with nothing
  // left to happen (a policy bug, or knobs under which some run can never start).
  Result<ClusterTotals> Run(Scheduler& scheduler);

  // Starts `run` (waiting, i.e. announced by OnReady and not launched since) on `gpu` now.
  void Launch(int run, int gpu);

  double now() const { return now_; }
  const SimConfig& config() const { return config_; }
  const SimRun& run(int i) const { return runs_[i]; }
  int run_count() const { return static_cast<int>(runs_.size()); }
  // Shapes are numbered in order of first appearance in the run list.
  int shape_of(int run) const { return run_state_[run].shape; }
  int shape_count() const { return static_cast<int>(shape_names_.size()); }
  const std::string& shape_name(int shape) const { return shape_names_[shape]; }

  int gpu_of(int run) const { return run_state_[run].gpu; }
  int node_of(int gpu) const { return gpu / config_.gpus_per_node; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int first_gpu_of_node(int node) const { return node * config_.gpus_per_node; }
  int end_gpu_of_node(int node) const;  // one past its last GPU
  // Launched runs on the GPU (in start-up or training), in launch order.
  const std::vector<int>& runs_on(int gpu) const { return gpus_[gpu].runs; }
  int training_on(int gpu) const { return gpus_[gpu].training; }
  // GPU memory held by the runs training there, at their steady footprint (what a monitor sees now).
  double visible_mem_gib(int gpu) const { return gpus_[gpu].mem_visible; }
  // Sum of the speeds of the runs training there, each relative to its solo speed.
  double progress_rate(int gpu) const { return gpus_[gpu].training * gpus_[gpu].factor; }
  // Cores wanted by the runs launched on the node's GPUs, start-up included.
  double node_cores_launched(int node) const { return nodes_[node].cores_launched; }

 private:
  enum class Phase { kWaiting, kBackoff, kStartup, kTraining, kDone };
  enum class EventKind { kAllocate, kMeasured, kFinish, kRetry };

  struct Event {
    double t;
    uint64_t seq;  // ties at one instant resolve in scheduling order
    EventKind kind;
    int id;        // a run, or a GPU for kFinish
    uint64_t tag;  // the run's attempt, or the GPU's schedule version for kFinish
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  };
  struct RunState {
    int shape = 0;
    Phase phase = Phase::kWaiting;
    int gpu = -1;
    uint64_t attempt = 0;
    double target = 0;  // the GPU's progress clock value at which the run is done
  };
  struct GpuState {
    std::vector<int> runs;
    int training = 0;
    double sum_util = 0;
    double mem_visible = 0;
    double peak_sum = 0;
    double factor = 1;     // speed of each training run, host effects included
    double clock = 0;      // solo-seconds of work each training run has done since time 0
    double last_t = 0;     // time `clock` and the integrals were brought up to
    uint64_t version = 0;  // bumped whenever the pending finish event becomes stale
    double busy_s = 0;
    double occupancy_s = 0;
    double run_s = 0;
  };
  struct NodeState {
    double cores_training = 0;
    double cores_launched = 0;
    double cpu_factor = 1;
  };

  void Push(double t, EventKind kind, int id, uint64_t tag);
  void Handle(const Event& e, Scheduler& scheduler);
  void Allocate(int run, Scheduler& scheduler);
  void Finish(int gpu, Scheduler& scheduler);
  // Brings the GPU's progress clock and integrals up to now, at its current rates.
  void Advance(int gpu);
  // After the runs training on `gpu` changed: new speeds there (and on the node, if its CPU slowdown
  // changed) and new finish events.
  void UpdateSpeeds(int gpu);
  void Reschedule(int gpu);
  void Leave(int run);
  // Smallest progress-clock target among the runs training on the GPU; infinity when none.
  double EarliestTarget(int gpu) const;

  const SimConfig& config_;
  const std::vector<SimRun>& runs_;
  std::vector<std::string> shape_names_;
  std::vector<RunState> run_state_;
  std::vector<GpuState> gpus_;
  std::vector<NodeState> nodes_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  uint64_t next_seq_ = 0;
  double now_ = 0;
  ClusterTotals totals_;
};

}  // namespace sat::sim
