#include "sim/cluster.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

namespace sat::sim {

namespace {

// Progress clocks are sums of products; a run is done when its target is reached up to rounding.
bool Reached(double clock, double target) { return clock >= target - 1e-9 * std::max(1.0, target); }

}  // namespace

Cluster::Cluster(const SimConfig& config, const std::vector<SimRun>& runs)
    : config_(config), runs_(runs), run_state_(runs.size()), gpus_(config.gpus) {
  nodes_.resize((config.gpus + config.gpus_per_node - 1) / config.gpus_per_node);
  std::unordered_map<std::string, int> shape_ids;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto [it, added] = shape_ids.emplace(runs[i].shape, static_cast<int>(shape_names_.size()));
    if (added) shape_names_.push_back(runs[i].shape);
    run_state_[i].shape = it->second;
  }
}

int Cluster::end_gpu_of_node(int node) const { return std::min(config_.gpus, (node + 1) * config_.gpus_per_node); }

Result<ClusterTotals> Cluster::Run(Scheduler& scheduler) {
  for (int i = 0; i < run_count(); ++i) scheduler.OnReady(*this, i);
  scheduler.Dispatch(*this);
  while (totals_.completed < run_count()) {
    if (events_.empty()) {
      return Error{fmt::format("simulation stalled at t={:.0f} s with {} of {} runs unfinished", now_,
                               run_count() - totals_.completed, run_count())};
    }
    // All events of one instant first, so the scheduler decides on the state at the end of the instant.
    now_ = events_.top().t;
    while (!events_.empty() && events_.top().t == now_) {
      Event e = events_.top();
      events_.pop();
      Handle(e, scheduler);
    }
    scheduler.Dispatch(*this);
  }
  // Every GPU was brought up to date when its last run left, so the integrals are complete.
  for (const GpuState& g : gpus_) {
    totals_.busy_gpu_s += g.busy_s;
    totals_.occupancy_gpu_s += g.occupancy_s;
    totals_.run_gpu_s += g.run_s;
  }
  return totals_;
}

void Cluster::Launch(int run, int gpu) {
  RunState& r = run_state_[run];
  Advance(gpu);
  r.phase = Phase::kStartup;
  r.gpu = gpu;
  ++r.attempt;
  gpus_[gpu].runs.push_back(run);
  nodes_[node_of(gpu)].cores_launched += runs_[run].cpu_cores;
  totals_.max_runs_on_a_gpu = std::max(totals_.max_runs_on_a_gpu, static_cast<int>(gpus_[gpu].runs.size()));
  Push(now_ + runs_[run].startup_s, EventKind::kAllocate, run, r.attempt);
}

void Cluster::Push(double t, EventKind kind, int id, uint64_t tag) {
  events_.push(Event{t, next_seq_++, kind, id, tag});
}

void Cluster::Handle(const Event& e, Scheduler& scheduler) {
  switch (e.kind) {
    case EventKind::kAllocate:
      ++totals_.events;
      Allocate(e.id, scheduler);
      return;
    case EventKind::kMeasured:
      // A run that finished (or failed) since has nothing left to measure.
      if (run_state_[e.id].phase != Phase::kTraining || run_state_[e.id].attempt != e.tag) return;
      ++totals_.events;
      scheduler.OnMeasured(*this, e.id);
      return;
    case EventKind::kFinish:
      if (gpus_[e.id].version != e.tag) return;
      ++totals_.events;
      Finish(e.id, scheduler);
      return;
    case EventKind::kRetry:
      ++totals_.events;
      run_state_[e.id].phase = Phase::kWaiting;
      scheduler.OnReady(*this, e.id);
      return;
  }
}

void Cluster::Allocate(int run, Scheduler& scheduler) {
  const SimRun& spec = runs_[run];
  RunState& r = run_state_[run];
  int gpu = r.gpu;
  GpuState& g = gpus_[gpu];
  Advance(gpu);
  if (g.peak_sum + spec.peak_gib > config_.gpu_mem_gib * (1 + 1e-12)) {
    // The newcomer is the one whose allocation fails; the runs already training keep their memory.
    Leave(run);
    r.phase = Phase::kBackoff;
    ++totals_.oom_events;
    Push(now_ + config_.oom_retry_s, EventKind::kRetry, run, r.attempt);
    scheduler.OnOom(*this, run, gpu);
    return;
  }
  r.phase = Phase::kTraining;
  r.target = g.clock + spec.duration_s;
  ++g.training;
  g.sum_util += spec.gpu_util;
  g.mem_visible += spec.mem_gib;
  g.peak_sum += spec.peak_gib;
  nodes_[node_of(gpu)].cores_training += spec.cpu_cores;
  UpdateSpeeds(gpu);
  if (scheduler.WantsMeasurements()) Push(now_ + spec.warmup_s, EventKind::kMeasured, run, r.attempt);
  scheduler.OnTraining(*this, run);
}

void Cluster::Finish(int gpu, Scheduler& scheduler) {
  GpuState& g = gpus_[gpu];
  Advance(gpu);
  // The event was scheduled for the earliest target; others may be reached in the same instant.
  double earliest = EarliestTarget(gpu);
  std::vector<int> done;
  for (int run : g.runs) {
    const RunState& r = run_state_[run];
    if (r.phase == Phase::kTraining && (r.target == earliest || Reached(g.clock, r.target))) done.push_back(run);
  }
  for (int run : done) {
    const SimRun& spec = runs_[run];
    --g.training;
    g.sum_util -= spec.gpu_util;
    g.mem_visible -= spec.mem_gib;
    g.peak_sum -= spec.peak_gib;
    nodes_[node_of(gpu)].cores_training -= spec.cpu_cores;
    Leave(run);
    run_state_[run].phase = Phase::kDone;
    ++totals_.completed;
  }
  if (g.training == 0) {
    // Sums of doubles drift; an idle GPU starts again from exact zeros.
    g.sum_util = g.mem_visible = g.peak_sum = 0;
  }
  totals_.makespan_s = now_;
  UpdateSpeeds(gpu);
  for (int run : done) scheduler.OnFinished(*this, run, gpu);
}

void Cluster::Leave(int run) {
  RunState& r = run_state_[run];
  std::vector<int>& on_gpu = gpus_[r.gpu].runs;
  on_gpu.erase(std::find(on_gpu.begin(), on_gpu.end(), run));
  nodes_[node_of(r.gpu)].cores_launched -= runs_[run].cpu_cores;
}

double Cluster::EarliestTarget(int gpu) const {
  double earliest = std::numeric_limits<double>::infinity();
  for (int run : gpus_[gpu].runs) {
    if (run_state_[run].phase == Phase::kTraining) earliest = std::min(earliest, run_state_[run].target);
  }
  return earliest;
}

void Cluster::Advance(int gpu) {
  GpuState& g = gpus_[gpu];
  double dt = now_ - g.last_t;
  g.last_t = now_;
  if (dt <= 0 || g.runs.empty()) return;
  if (g.training > 0) {
    g.clock += g.factor * dt;
    double busy = std::min(g.sum_util, config_.gpu_capacity) * nodes_[node_of(gpu)].cpu_factor;
    g.occupancy_s += std::min(1.0, busy) * dt;
  }
  g.busy_s += dt;
  g.run_s += static_cast<double>(g.runs.size()) * dt;
}

void Cluster::UpdateSpeeds(int gpu) {
  int node = node_of(gpu);
  NodeState& n = nodes_[node];
  double cpu = HostCpuFactor(n.cores_training, config_.cpu_cores_per_node);
  auto refresh = [&](int g) {
    GpuState& s = gpus_[g];
    s.factor = GpuShareFactor(s.sum_util, s.training, config_.gpu_capacity, config_.switch_overhead) * cpu;
    Reschedule(g);
  };
  if (cpu == n.cpu_factor) {
    refresh(gpu);
    return;
  }
  // The node's CPU slowdown changed: its other GPUs ran at the old speed until now.
  for (int g = first_gpu_of_node(node); g < end_gpu_of_node(node); ++g) Advance(g);
  n.cpu_factor = cpu;
  for (int g = first_gpu_of_node(node); g < end_gpu_of_node(node); ++g) {
    if (g == gpu || gpus_[g].training > 0) refresh(g);
  }
}

void Cluster::Reschedule(int gpu) {
  GpuState& g = gpus_[gpu];
  ++g.version;
  if (g.training == 0) return;
  Push(now_ + std::max(0.0, EarliestTarget(gpu) - g.clock) / g.factor, EventKind::kFinish, gpu, g.version);
}

}  // namespace sat::sim
