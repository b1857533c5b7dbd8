// Rule 12 of the packer (packing.h): on a GPU, a growth step's newcomers start up while the check that growth waits
// for ends, and join a degree once the one they were started ahead of is proven.
#include <fmt/format.h>

#include <algorithm>

#include "sweep/packing.h"

namespace sat::sweep {

std::vector<std::string> Packer::Ahead(int device) const {
  std::vector<std::string> ahead;
  for (const std::string& key : plans_[device].runs)
    if (where_.at(key).ahead) ahead.push_back(key);
  return ahead;
}

void Packer::StartAhead(int device, const DeviceState& state, double now, std::vector<Admission>& admitted) {
  Plan& plan = plans_[device];
  if (!params_.start_ahead || devices_[device].kind != DeviceKind::kGpu || plan.trial > 0) return;
  const Mix mix = MixOf(device);
  if (mix.empty() || mix.front() != mix.back()) return;
  const std::string shape = mix.front();
  const std::optional<double> startup = StartupSeconds(shape);
  if (!startup || (!params_.pack_clocked && clocked_.count(shape)) || HasPoorMix(mix, std::nullopt)) return;
  // Growth waits only for measurements: no run about to leave (rule 11), none above the proven degree but the
  // pending step's newcomers, and the device steady for half a window.
  const int pending = static_cast<int>(plan.probe.newcomers.size());
  const int runs = static_cast<int>(plan.runs.size());
  const double window_s = WindowOf(plan);
  if (static_cast<int>(Counted(device, now).size()) != runs || runs != plan.proven + pending ||
      now < plan.changed_t + window_s / 2)
    return;
  // Every run there trains, its memory read half a warm-up after its first step, and those not measured yet will be
  // by the time the newcomers' start-ups end.
  uint64_t provisional = 0;
  double settled = now;
  for (const std::string& key : plan.runs) {
    const Live& run = where_.at(key);
    if (!run.stepped_t || now < *run.stepped_t + run.warmup_s / 2) return;
    provisional = std::max(provisional, run.footprint.mem_bytes);
    if (!run.measured) settled = std::max(settled, run.settled_t);
  }
  if (now + 0.9 * *startup < settled) return;
  const int want = std::min(std::min(plan.cap, params_.max_per_device) - runs, pending > 0 ? pending : plan.burst);
  const uint64_t estimate = Estimate(shape).value_or(provisional);
  // A start-up changes no load: the device's last change stands for the checks to come.
  const double changed_t = plan.changed_t;
  int started = 0;
  for (; started < want; ++started) {
    auto queued = waiting_.find(shape);
    if (queued == waiting_.end() || queued->second.empty() || !Fits(device, state, estimate, provisional)) break;
    const auto [index, key] = *queued->second.begin();
    Place(key, index, device, now, false);
    Live& run = where_.at(key);
    run.ahead = true;
    run.ahead_of = plan.proven + pending;
    admitted.push_back(Admission{key, device, true});
  }
  plan.changed_t = changed_t;
  if (started == 0) return;
  notes_.push_back(fmt::format(
      "{}: {} run{} started ahead: {:.1f}-s start-ups overlap {}", devices_[device].name, started,
      started == 1 ? "" : "s", *startup,
      pending > 0 ? fmt::format("the degree-{} check", plan.proven + pending) : std::string("the runs' measurement")));
}

int Packer::Adopt(int device, double now) {
  Plan& plan = plans_[device];
  Probe probe;
  probe.adopted = true;
  probe.admitted_t = now;
  probe.steady_t = plan.changed_t;
  probe.departures = plan.departures;
  for (const std::string& key : plan.runs) {
    Live& run = where_.at(key);
    if (!run.ahead) {
      // The before-window starts past every incumbent's warm-up.
      probe.incumbents.push_back(key);
      probe.steady_t = std::max(probe.steady_t, run.stepped_t.value_or(run.placed_t) + run.warmup_s);
      continue;
    }
    run.ahead = false;
    probe.newcomers.push_back(key);
    // One that already trains joined the load at its first step.
    if (run.stepped_t && (!probe.stepped || *run.stepped_t < probe.admitted_t))
      probe.admitted_t = *run.stepped_t, probe.stepped = true;
  }
  probe.degree = static_cast<int>(Counted(device, now).size());
  plan.probe = std::move(probe);
  return static_cast<int>(plan.probe.newcomers.size());
}

}  // namespace sat::sweep
