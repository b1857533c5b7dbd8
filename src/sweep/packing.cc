#include "sweep/packing.h"

#include <fmt/format.h>

#include <algorithm>

namespace sat::sweep {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// "3 x bs=32 + 1 x bs=64"; "3 runs" when every run shares the unnamed shape.
std::string FormatMix(const std::vector<std::string>& mix) {
  std::string out;
  for (size_t i = 0; i < mix.size();) {
    size_t j = i;
    while (j < mix.size() && mix[j] == mix[i]) ++j;
    if (!out.empty()) out += " + ";
    out +=
        mix[i].empty() ? fmt::format("{} run{}", j - i, j - i == 1 ? "" : "s") : fmt::format("{} x {}", j - i, mix[i]);
    i = j;
  }
  return out;
}

// Whether multiset `inner` is contained in multiset `outer` (both sorted).
bool Includes(const std::vector<std::string>& outer, const std::vector<std::string>& inner) {
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

}  // namespace

std::string HostPressure(const HostState& host, const PackingParams& params, bool check_cpu) {
  std::vector<std::string> why;
  if (check_cpu && host.cpu_util_pct && *host.cpu_util_pct >= params.host_cpu_limit_pct) {
    why.push_back(fmt::format("host CPU {:.0f}% busy (limit {:.0f}%)", *host.cpu_util_pct, params.host_cpu_limit_pct));
  }
  if (host.mem_total_bytes && host.mem_available_bytes &&
      static_cast<double>(*host.mem_available_bytes) <
          params.mem_reserve * static_cast<double>(*host.mem_total_bytes)) {
    why.push_back(fmt::format("host RAM {:.1f} GiB available of {:.1f} GiB", *host.mem_available_bytes / kGiB,
                              *host.mem_total_bytes / kGiB));
  }
  if (host.disk_busy_pct && *host.disk_busy_pct >= params.disk_busy_limit_pct) {
    why.push_back(fmt::format("a disk is {:.0f}% busy", *host.disk_busy_pct));
  }
  if (host.net_util && *host.net_util >= params.net_limit) {
    why.push_back(fmt::format("a network link carries {:.0f}% of its speed", 100 * *host.net_util));
  }
  return fmt::format("{}", fmt::join(why, "; "));
}

Packer::Packer(std::vector<DeviceInfo> devices, PackingParams params)
    : devices_(std::move(devices)), params_(params), plans_(devices_.size()) {}

void Packer::Enqueue(const std::string& key, int64_t index, const std::string& shape) {
  waiting_[shape].emplace(index, key);
  queued_shape_[key] = shape;
}

std::optional<uint64_t> Packer::Estimate(const std::string& shape) const {
  auto it = shapes_.find(shape);
  if (it != shapes_.end() && it->second.measured) return it->second.mem_bytes;
  std::optional<uint64_t> largest;
  for (const auto& [name, s] : shapes_) {
    if (s.measured) largest = std::max(largest.value_or(0), s.mem_bytes);
  }
  return largest;
}

Packer::Mix Packer::MixOf(int device) const {
  Mix mix;
  for (const std::string& key : plans_[device].runs) mix.push_back(where_.at(key).shape);
  std::sort(mix.begin(), mix.end());
  return mix;
}

bool Packer::HasPoorMix(const Mix& mix, const std::optional<std::string>& shape) const {
  return std::any_of(poor_mixes_.begin(), poor_mixes_.end(), [&](const Mix& poor) {
    const bool relevant = !shape || std::find(poor.begin(), poor.end(), *shape) != poor.end();
    return relevant && Includes(mix, poor);
  });
}

std::optional<std::pair<int64_t, std::string>> Packer::Pick(int device, const DeviceState& state) const {
  const Mix mix = MixOf(device);
  // Memory the runs there hold or are about to: measured footprints, and estimates for the others, whose
  // growth to their estimate the device's free memory does not show yet.
  uint64_t used = 0, pending_bytes = 0;
  for (const std::string& key : plans_[device].runs) {
    const Live& run = where_.at(key);
    const uint64_t estimate = run.measured ? 0 : Estimate(run.shape).value_or(0);
    used += std::max(run.footprint.mem_bytes, estimate);
    if (!run.measured) pending_bytes += estimate > run.footprint.mem_bytes ? estimate - run.footprint.mem_bytes : 0;
  }
  std::optional<std::pair<int64_t, std::string>> best;
  for (const auto& [shape, runs] : waiting_) {
    if (runs.empty() || (best && runs.begin()->first > best->first)) continue;
    const std::optional<uint64_t> estimate = Estimate(shape);
    if (!estimate) continue;
    const double need = static_cast<double>(*estimate) * (1 + params_.margin);
    if (state.capacity_bytes &&
        static_cast<double>(used + *estimate) * (1 + params_.margin) > static_cast<double>(*state.capacity_bytes)) {
      continue;
    }
    if (state.free_bytes && need + static_cast<double>(pending_bytes) > static_cast<double>(*state.free_bytes)) {
      continue;
    }
    Mix grown = mix;
    grown.insert(std::upper_bound(grown.begin(), grown.end(), shape), shape);
    if (HasPoorMix(grown, shape)) continue;
    best = *runs.begin();
  }
  return best;
}

void Packer::Place(const std::string& key, int64_t index, int device, double now, bool growth) {
  const std::string shape = queued_shape_.at(key);
  queued_shape_.erase(key);
  auto& runs = waiting_.at(shape);
  runs.erase({index, key});
  if (runs.empty()) waiting_.erase(shape);
  Plan& plan = plans_[device];
  if (growth) plan.probe = Probe{key, now, plan.runs, plan.departures};
  plan.runs.push_back(key);
  Live run;
  run.key = key;
  run.index = index;
  run.shape = shape;
  run.device = device;
  where_[key] = std::move(run);
}

void Packer::Block(int device, const std::string& why) {
  Plan& plan = plans_[device];
  if (why == plan.blocked) return;
  plan.blocked = why;
  if (!why.empty()) notes_.push_back(fmt::format("{}: not growing: {}", devices_[device].name, why));
}

std::vector<Admission> Packer::Admit(double now, const std::vector<DeviceState>& devices, const HostState& host) {
  std::vector<Admission> admitted;
  for (int d = 0; d < static_cast<int>(devices_.size()) && !queued_shape_.empty(); ++d) {
    Plan& plan = plans_[d];
    while (!queued_shape_.empty()) {
      const int n = static_cast<int>(plan.runs.size());
      std::optional<std::pair<int64_t, std::string>> pick;
      bool growth = false;
      if (n == 0) {
        // Alone a run is never at risk: the earliest one goes, whatever its shape.
        for (const auto& [shape, runs] : waiting_) {
          if (!pick || runs.begin()->first < pick->first) pick = *runs.begin();
        }
        plan.proven = 1;
      } else {
        if (n >= std::min(plan.cap, params_.max_per_device)) break;
        growth = n >= plan.proven;
        const bool unmeasured = std::any_of(plan.runs.begin(), plan.runs.end(),
                                            [&](const std::string& key) { return !where_.at(key).measured; });
        // Growth is one newcomer at a time, each measured and judged before the next.
        if (growth && (!plan.probe.newcomer.empty() || unmeasured || HasPoorMix(MixOf(d), std::nullopt))) break;
        const std::string pressure = HostPressure(host, params_, growth && devices_[d].kind == DeviceKind::kGpu);
        Block(d, pressure);
        if (!pressure.empty()) break;
        pick = Pick(d, devices[d]);
      }
      if (!pick) break;
      const std::string key = pick->second;
      Place(key, pick->first, d, now, growth);
      admitted.push_back(Admission{key, d, growth});
      if (growth) break;
    }
  }
  return admitted;
}

void Packer::Learn(const std::string& shape, const Footprint& footprint) {
  Shape& s = shapes_[shape];
  s.measured = true;
  s.mem_bytes = std::max(s.mem_bytes, footprint.mem_bytes);
}

void Packer::Measured(const std::string& key, double now, const Footprint& footprint, const RateSource& rates) {
  auto it = where_.find(key);
  if (it == where_.end() || it->second.measured) return;
  Live& run = it->second;
  run.measured = true;
  run.footprint = footprint;
  Learn(run.shape, footprint);
  if (plans_[run.device].probe.newcomer == key) Evaluate(run.device, now, rates);
}

void Packer::Update(const std::string& key, const Footprint& footprint) {
  auto it = where_.find(key);
  if (it == where_.end()) return;
  it->second.footprint = footprint;
  if (it->second.measured) Learn(it->second.shape, footprint);
}

void Packer::Evaluate(int device, double now, const RateSource& rates) {
  Plan& plan = plans_[device];
  const Probe probe = std::exchange(plan.probe, Probe{});
  const std::string& name = devices_[device].name;
  if (plan.departures != probe.departures) {
    notes_.push_back(fmt::format("{}: degree {}: gain check inconclusive (a run left meanwhile)", name,
                                 probe.incumbents.size() + 1));
    return;
  }
  const int degree = static_cast<int>(plan.runs.size());
  // Each incumbent's rate after the admission over its rate before; training throughput where both windows
  // have it, else, for a run that reports no steps, CPU use where it is large enough to mean something. A run
  // that reports steps is judged by its throughput only: its CPU use during start-up or data preparation says
  // nothing about its training.
  double sum = 0;
  int signalled = 0;
  for (const std::string& key : probe.incumbents) {
    const WindowRates before = rates.Rates(key, probe.admitted_t - params_.window_s, probe.admitted_t);
    const WindowRates after = rates.Rates(key, now - params_.window_s, now);
    const bool steps = before.reports_steps || after.reports_steps;
    if (before.samples_per_s && after.samples_per_s && *before.samples_per_s > 0) {
      sum += *after.samples_per_s / *before.samples_per_s;
    } else if (!steps && before.cpu_pct && after.cpu_pct && *before.cpu_pct >= params_.quiet_cpu_pct) {
      sum += *after.cpu_pct / *before.cpu_pct;
    } else {
      continue;
    }
    ++signalled;
  }
  if (signalled == 0) {
    plan.proven = std::max(plan.proven, degree);
    notes_.push_back(
        fmt::format("{}: degree {}: its runs show no rate to compare (no throughput, little CPU); "
                    "growth continues",
                    name, degree));
    return;
  }
  const double n = static_cast<double>(probe.incumbents.size());
  const double gain = sum / signalled * (n + 1) / n - 1;
  if (gain >= params_.min_gain) {
    plan.proven = std::max(plan.proven, degree);
    notes_.push_back(fmt::format("{}: degree {} raised the progress rate by {:+.0f}%", name, degree, 100 * gain));
    return;
  }
  const Mix mix = MixOf(device);
  poor_mixes_.insert(mix);
  notes_.push_back(
      fmt::format("{}: degree {} changed the progress rate by only {:+.1f}% (under {:.0f}%): {} is "
                  "not formed again",
                  name, degree, 100 * gain, 100 * params_.min_gain, FormatMix(mix)));
}

int Packer::Left(const std::string& key, LeaveReason reason, const Footprint& footprint) {
  auto it = where_.find(key);
  if (it == where_.end()) return 0;
  const Live run = it->second;
  where_.erase(it);
  Plan& plan = plans_[run.device];
  const int before = static_cast<int>(plan.runs.size());
  plan.runs.erase(std::find(plan.runs.begin(), plan.runs.end(), key));
  // A run that finished before it was measured showed its whole footprint.
  if (!run.measured && reason == LeaveReason::kFinished) Learn(run.shape, footprint);
  if (plan.probe.newcomer == key) plan.probe = Probe{};
  ++plan.departures;
  if (reason == LeaveReason::kOutOfMemory && before > 1) {
    plan.cap = std::max(1, before - 1);
    plan.proven = std::min(plan.proven, plan.cap);
    notes_.push_back(fmt::format("{}: out of memory with {} runs: at most {} until it empties",
                                 devices_[run.device].name, before, plan.cap));
  }
  if (plan.runs.empty()) plan = Plan{};
  return before;
}

std::vector<std::string> Packer::TakeNotes() { return std::exchange(notes_, {}); }

std::vector<Packer::DeviceView> Packer::View() const {
  std::vector<DeviceView> views;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Plan& plan = plans_[d];
    DeviceView v;
    v.info = devices_[d];
    for (const std::string& key : plan.runs) {
      const Live& run = where_.at(key);
      v.runs.push_back(RunView{run.key, run.index, run.shape, run.measured, run.footprint});
    }
    v.proven = plan.proven;
    if (plan.cap != INT_MAX) v.cap = plan.cap;
    v.probing = !plan.probe.newcomer.empty();
    v.poor = !plan.runs.empty() && HasPoorMix(MixOf(static_cast<int>(d)), std::nullopt);
    views.push_back(std::move(v));
  }
  return views;
}

std::map<std::string, int> Packer::HeldDegrees() const {
  std::map<std::string, int> held;
  for (const Mix& mix : poor_mixes_) {
    if (mix.front() != mix.back()) continue;
    const int degree = static_cast<int>(mix.size()) - 1;
    auto [it, added] = held.emplace(mix.front(), degree);
    if (!added) it->second = std::min(it->second, degree);
  }
  return held;
}

}  // namespace sat::sweep
