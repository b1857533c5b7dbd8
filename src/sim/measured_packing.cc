#include "sim/measured_packing.h"

#include <algorithm>

namespace sat::sim {

namespace {

// The sorted shapes of the runs on a GPU.
std::vector<int> MixOf(const Cluster& cluster, int gpu) {
  std::vector<int> mix;
  for (int run : cluster.runs_on(gpu)) mix.push_back(cluster.shape_of(run));
  std::sort(mix.begin(), mix.end());
  return mix;
}

}  // namespace

MeasuredPacking::MeasuredPacking(const Cluster& cluster, const PolicyParams& params)
    : params_(params),
      shapes_(cluster.shape_count()),
      gpus_(cluster.config().gpus),
      measured_(cluster.run_count(), 0),
      poor_mixes_with_(cluster.shape_count()) {
  for (int gpu = 0; gpu < cluster.config().gpus; ++gpu) empty_.insert(gpu);
}

void MeasuredPacking::OnReady(Cluster& cluster, int run) {
  int s = cluster.shape_of(run);
  measured_[run] = 0;
  waiting_.insert(run);
  shapes_[s].waiting.insert(run);
  if (shapes_[s].measured && measured_waiting_.insert(s).second) dirty_.merge(idle_);
}

void MeasuredPacking::Start(Cluster& cluster, int run, int gpu) {
  int s = cluster.shape_of(run);
  waiting_.erase(run);
  shapes_[s].waiting.erase(run);
  if (shapes_[s].waiting.empty()) measured_waiting_.erase(s);
  empty_.erase(gpu);
  ++gpus_[gpu].unmeasured;
  cluster.Launch(run, gpu);
}

void MeasuredPacking::Learn(const Cluster& cluster, int run) {
  const SimRun& spec = cluster.run(run);
  Shape& shape = shapes_[cluster.shape_of(run)];
  shape.mem_gib = std::max(shape.mem_gib, spec.mem_gib);
  shape.cpu_cores = std::max(shape.cpu_cores, spec.cpu_cores);
  if (shape.measured) return;
  shape.measured = true;
  // Its waiting runs are new candidates for GPUs that found nothing to admit.
  if (!shape.waiting.empty()) {
    measured_waiting_.insert(cluster.shape_of(run));
    dirty_.merge(idle_);
  }
}

void MeasuredPacking::OnMeasured(Cluster& cluster, int run) {
  int gpu = cluster.gpu_of(run);
  GpuPlan& plan = gpus_[gpu];
  measured_[run] = 1;
  --plan.unmeasured;
  plan.measured_mem += cluster.run(run).mem_gib;
  Learn(cluster, run);
  if (plan.probe.newcomer == run) Evaluate(cluster, gpu);
  idle_.erase(gpu);
  dirty_.insert(gpu);
}

void MeasuredPacking::Evaluate(const Cluster& cluster, int gpu) {
  GpuPlan& plan = gpus_[gpu];
  Probe probe = plan.probe;
  plan.probe = Probe{};
  // A run that left meanwhile changed the rate for reasons other than the newcomer.
  if (plan.departures != probe.departures || probe.rate_before <= 0) return;
  double gain = cluster.progress_rate(gpu) / probe.rate_before - 1;
  if (gain >= params_.min_gain) return;
  Mix mix = MixOf(cluster, gpu);
  if (!poor_mixes_.insert(mix).second) return;
  for (size_t i = 0; i < mix.size(); ++i) {
    if (i == 0 || mix[i] != mix[i - 1]) poor_mixes_with_[mix[i]].push_back(mix);
  }
}

bool MeasuredPacking::HasPoorMix(const Mix& mix, int shape) const {
  auto contains = [&](const Mix& poor) { return std::includes(mix.begin(), mix.end(), poor.begin(), poor.end()); };
  auto any_with = [&](int s) { return std::any_of(poor_mixes_with_[s].begin(), poor_mixes_with_[s].end(), contains); };
  if (shape >= 0) return any_with(shape);
  for (size_t i = 0; i < mix.size(); ++i) {
    if ((i == 0 || mix[i] != mix[i - 1]) && any_with(mix[i])) return true;
  }
  return false;
}

void MeasuredPacking::OnOom(Cluster& cluster, int run, int gpu) {
  --gpus_[gpu].unmeasured;
  gpus_[gpu].cap = std::max(1, static_cast<int>(cluster.runs_on(gpu).size()));
  AfterLeave(cluster, run, gpu);
}

void MeasuredPacking::OnFinished(Cluster& cluster, int run, int gpu) {
  GpuPlan& plan = gpus_[gpu];
  if (measured_[run]) {
    plan.measured_mem -= cluster.run(run).mem_gib;
  } else {
    // It ended before its warm-up; its whole life was watched, so its footprint is known.
    --plan.unmeasured;
    Learn(cluster, run);
  }
  ++plan.departures;
  AfterLeave(cluster, run, gpu);
}

void MeasuredPacking::AfterLeave(const Cluster& cluster, int run, int gpu) {
  if (gpus_[gpu].probe.newcomer == run) gpus_[gpu].probe = Probe{};
  if (cluster.runs_on(gpu).empty()) {
    gpus_[gpu] = GpuPlan{};
    empty_.insert(gpu);
  }
  // Memory or host cores were freed: every GPU of the node may fit a newcomer now.
  int node = cluster.node_of(gpu);
  for (int g = cluster.first_gpu_of_node(node); g < cluster.end_gpu_of_node(node); ++g) {
    idle_.erase(g);
    dirty_.insert(g);
  }
}

int MeasuredPacking::PickNewcomer(const Cluster& cluster, int gpu) const {
  const GpuPlan& plan = gpus_[gpu];
  const std::vector<int>& on_gpu = cluster.runs_on(gpu);
  int n = static_cast<int>(on_gpu.size());
  if (n >= std::min(plan.cap, params_.max_runs_per_gpu)) return -1;
  // A GPU that holds a poor mix already gains nothing from more runs.
  Mix mix = MixOf(cluster, gpu);
  if (HasPoorMix(mix, -1)) return -1;
  const SimConfig& config = cluster.config();
  double free_gib = config.gpu_mem_gib / (1 + params_.margin) - plan.measured_mem;
  double free_cores = params_.cpu_limit * config.cpu_cores_per_node - cluster.node_cores_launched(cluster.node_of(gpu));
  int best = -1;
  for (int s : measured_waiting_) {
    const Shape& shape = shapes_[s];
    int head = *shape.waiting.begin();
    if ((best >= 0 && head > best) || shape.mem_gib > free_gib || shape.cpu_cores > free_cores) continue;
    Mix grown = mix;
    grown.insert(std::upper_bound(grown.begin(), grown.end(), s), s);
    if (!HasPoorMix(grown, s)) best = head;
  }
  return best;
}

void MeasuredPacking::Dispatch(Cluster& cluster) {
  // Empty GPUs take the earliest waiting runs, measured shape or not.
  while (!empty_.empty() && !waiting_.empty()) Start(cluster, *waiting_.begin(), *empty_.begin());
  // A waiting run of a shape never measured can only start alone: hold growth so that GPUs drain for it.
  if (!waiting_.empty() && !shapes_[cluster.shape_of(*waiting_.begin())].measured) return;
  while (!dirty_.empty() && !measured_waiting_.empty()) {
    int gpu = *dirty_.begin();
    dirty_.erase(dirty_.begin());
    // Empty, or a newcomer still unmeasured: the next event on this GPU marks it again.
    if (cluster.runs_on(gpu).empty() || gpus_[gpu].unmeasured > 0) continue;
    int run = PickNewcomer(cluster, gpu);
    if (run < 0) {
      idle_.insert(gpu);
      continue;
    }
    gpus_[gpu].probe = Probe{run, cluster.progress_rate(gpu), gpus_[gpu].departures};
    Start(cluster, run, gpu);
  }
}

std::map<std::string, int> MeasuredPacking::HeldDegrees(const Cluster& cluster) const {
  std::map<std::string, int> held;
  for (const Mix& mix : poor_mixes_) {
    if (mix.front() != mix.back()) continue;
    const std::string& name = cluster.shape_name(mix.front());
    int degree = static_cast<int>(mix.size()) - 1;
    auto [it, added] = held.emplace(name, degree);
    if (!added) it->second = std::min(it->second, degree);
  }
  return held;
}

}  // namespace sat::sim
