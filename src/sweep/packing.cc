#include "sweep/packing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "sweep/clock_runs.h"

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

// The middle value of a non-empty list; of an even one, the higher of the two middle values.
double UpperMedian(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + static_cast<long>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

// Whether multiset `inner` is contained in multiset `outer` (both sorted).
bool Includes(const std::vector<std::string>& outer, const std::vector<std::string>& inner) {
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

}  // namespace

Pressure HostPressure(const HostState& host, const PackingParams& params, bool check_cpu) {
  Pressure p;
  std::vector<std::string> why;
  auto press = [&](Pressure::Resource r, std::string text) {
    p.resources |= r;
    why.push_back(std::move(text));
  };
  if (check_cpu && host.cpu_util_pct && *host.cpu_util_pct >= params.host_cpu_limit_pct) {
    press(Pressure::kCpu,
          fmt::format("host CPU {:.0f}% busy (limit {:.0f}%)", *host.cpu_util_pct, params.host_cpu_limit_pct));
  }
  if (host.mem_total_bytes && host.mem_available_bytes &&
      static_cast<double>(*host.mem_available_bytes) <
          params.mem_reserve * static_cast<double>(*host.mem_total_bytes)) {
    press(Pressure::kRam, fmt::format("host RAM {:.1f} GiB available of {:.1f} GiB", *host.mem_available_bytes / kGiB,
                                      *host.mem_total_bytes / kGiB));
  }
  if (host.disk_busy_pct && *host.disk_busy_pct >= params.disk_busy_limit_pct) {
    press(Pressure::kDisk, fmt::format("a disk is {:.0f}% busy", *host.disk_busy_pct));
  }
  if (host.net_util && *host.net_util >= params.net_limit) {
    press(Pressure::kNetwork, fmt::format("a network link carries {:.0f}% of its speed", 100 * *host.net_util));
  }
  p.why = fmt::format("{}", fmt::join(why, "; "));
  return p;
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

std::optional<double> Packer::SuccessorAfter(const std::string& shape) const {
  const std::optional<double> training = RunSeconds(shape), startup = StartupSeconds(shape);
  // Only where start-ups are long against training: there they would leave the device idle a third of the time or
  // more; a short start-up costs little, while a successor started on a misjudged end would crowd the device.
  if (!training || !startup || *startup < *training / 2) return std::nullopt;
  return *training - *startup;
}

std::vector<std::string> Packer::Counted(int device, double now) const {
  const Plan& plan = plans_[device];
  const Mix mix = MixOf(device);
  if (mix.empty() || mix.front() != mix.back()) return plan.runs;
  const std::optional<double> after = SuccessorAfter(mix.front());
  if (!after) return plan.runs;
  std::vector<std::string> counted;
  for (const std::string& key : plan.runs) {
    const Live& run = where_.at(key);
    if (!run.stepped_t || now < *run.stepped_t + *after) counted.push_back(key);
  }
  return counted;
}

Packer::Mix Packer::CountedMix(int device, double now) const {
  Mix mix;
  for (const std::string& key : Counted(device, now)) mix.push_back(where_.at(key).shape);
  std::sort(mix.begin(), mix.end());
  return mix;
}

bool Packer::HasPoorMix(const Mix& mix, const std::optional<std::string>& shape) const {
  return std::any_of(poor_mixes_.begin(), poor_mixes_.end(), [&](const Mix& poor) {
    const bool relevant = !shape || std::find(poor.begin(), poor.end(), *shape) != poor.end();
    return relevant && Includes(mix, poor);
  });
}

bool Packer::Fits(int device, const DeviceState& state, uint64_t estimate, uint64_t provisional) const {
  // Memory the runs there hold or are about to: measured footprints, and estimates for the others, whose
  // growth to their estimate the device's free memory does not show yet.
  uint64_t used = 0, pending_bytes = 0;
  for (const std::string& key : plans_[device].runs) {
    const Live& run = where_.at(key);
    const uint64_t expected = run.measured ? 0 : Estimate(run.shape).value_or(provisional);
    used += std::max(run.footprint.mem_bytes, expected);
    if (!run.measured) pending_bytes += expected > run.footprint.mem_bytes ? expected - run.footprint.mem_bytes : 0;
  }
  const double need = static_cast<double>(estimate) * (1 + params_.margin);
  if (state.capacity_bytes &&
      static_cast<double>(used + estimate) * (1 + params_.margin) > static_cast<double>(*state.capacity_bytes))
    return false;
  return !state.free_bytes || need + static_cast<double>(pending_bytes) <= static_cast<double>(*state.free_bytes);
}

std::optional<std::pair<int64_t, std::string>> Packer::Pick(int device, const DeviceState& state, double now) const {
  // The mix it would join: runs about to leave (rule 11) are not part of it.
  const Mix mix = CountedMix(device, now);
  std::optional<std::pair<int64_t, std::string>> best;
  for (const auto& [shape, runs] : waiting_) {
    if (runs.empty() || (best && runs.begin()->first > best->first)) continue;
    const std::optional<uint64_t> estimate = Estimate(shape);
    if (!estimate || !Fits(device, state, *estimate)) continue;
    Mix grown = mix;
    grown.insert(std::upper_bound(grown.begin(), grown.end(), shape), shape);
    if (HasPoorMix(grown, shape)) continue;
    // Runs on the clock share no device: packed, each would train less in the same time.
    if (!params_.pack_clocked && clocked_.count(shape)) continue;
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
  const int counted = static_cast<int>(Counted(device, now).size());
  const bool successor = !growth && counted < static_cast<int>(plan.runs.size());
  if (growth && plan.probe.newcomers.empty())
    plan.probe = Probe{{key}, now, plan.changed_t, plan.runs, plan.departures, counted + 1};
  else if (growth) plan.probe.newcomers.push_back(key), ++plan.probe.degree;
  // Its start-up trains nothing: rule 10's spans change when it makes its first step (Stepping).
  plan.changed_t = now;
  plan.runs.push_back(key);
  Live run;
  run.key = key;
  run.index = index;
  run.shape = shape;
  run.device = device;
  run.placed_t = now;
  run.successor = successor;
  run.start = run.peak = static_cast<int>(plan.runs.size());
  // The runs already there now share their device with one more, perhaps of another shape; those placed in this
  // same tick (a burst) start at the new degree with it.
  for (const std::string& other : plan.runs) {
    if (other == key) continue;
    Live& o = where_.at(other);
    o.peak = std::max(o.peak, run.peak);
    if (o.placed_t == now) o.start = run.peak;
    if (o.shape != shape) o.one_shape = run.one_shape = false;
  }
  where_[key] = std::move(run);
}

int Packer::OneShapeDegree(const std::string& key) const {
  auto it = where_.find(key);
  if (it == where_.end()) return 0;
  const Live& run = it->second;
  return run.one_shape && run.peak == run.start ? run.peak : 0;
}

void Packer::Block(int device, const Pressure& pressure) {
  Plan& plan = plans_[device];
  // The same resources pressed with readings that move (host CPU 91%, 93%, 96%...) are one reason: noted once, not
  // at every tick (the H200 sweep printed it every half second for 15 s).
  const bool same = pressure.resources == plan.blocked;
  plan.blocked = pressure.resources;
  if (!pressure.none() && !same)
    notes_.push_back(fmt::format("{}: not growing: {}", devices_[device].name, pressure.why));
}

std::vector<Admission> Packer::Admit(double now, const std::vector<DeviceState>& devices, const HostState& host) {
  std::vector<Admission> admitted;
  for (int d = 0; d < static_cast<int>(devices_.size()) && !queued_shape_.empty(); ++d) {
    Plan& plan = plans_[d];
    if (plan.departures != plan.departures_seen) plan.departures_seen = plan.departures, plan.changed_t = now;
    int burst_left = 0;  // newcomers of this tick's growth step still to admit
    while (!queued_shape_.empty()) {
      // The degree: runs about to leave, whose successors may start now, do not count (rule 11).
      const int n = static_cast<int>(Counted(d, now).size());
      std::optional<std::pair<int64_t, std::string>> pick;
      bool growth = false;
      if (plan.runs.empty()) {
        // Alone a run is never at risk: the earliest one goes, whatever its shape.
        for (const auto& [shape, runs] : waiting_) {
          if (!pick || runs.begin()->first < pick->first) pick = *runs.begin();
        }
        plan.proven = 1;
        StartRemembered(d, queued_shape_.at(pick->second));
      } else {
        // The cap after an out of memory and the most runs a device takes count every run there, successors too.
        if (static_cast<int>(plan.runs.size()) >= std::min(plan.cap, params_.max_per_device)) break;
        // Runs started ahead of a step (rule 12) count for no degree until it adopts them. Where runs left meanwhile
        // they fill in, as refills would; where the degree they were started ahead of was not proven, they are plain
        // runs above the proven degree.
        const int floor = std::max(plan.proven, plan.trial);
        std::vector<std::string> ahead = Ahead(d);
        for (auto it = ahead.begin(); it != ahead.end();) {
          Live& run = where_.at(*it);
          const bool gap = n - static_cast<int>(ahead.size()) < floor;
          const bool unproven = plan.probe.newcomers.empty() && plan.proven < run.ahead_of;
          if (!gap && !unproven) {
            ++it;
            continue;
          }
          run.ahead = false;
          if (run.stepped_t) plan.changed_t = std::max(plan.changed_t, *run.stepped_t);
          it = ahead.erase(it);
        }
        const int counted = n - static_cast<int>(ahead.size());
        // Below the proven degree, or the degree on trial (rule 10), a run refills; at it, the device grows.
        growth = counted >= floor;
        // A successor started ahead (rule 11) restores a degree already known: growth does not wait for it.
        const bool unmeasured = std::any_of(plan.runs.begin(), plan.runs.end(), [&](const std::string& key) {
          const Live& run = where_.at(key);
          return !Known(run) && !run.successor && !run.ahead;
        });
        // The host CPU stops a GPU's growth, unless the last step paid the slow start's burst gain per newcomer:
        // the runs' own progress then shows that the CPU's load is not what limits them (on the H200 each run's
        // torch kept 16 cores 90-99% busy, growth waited 10-15 s after degree 2 read +36-40%, and 8 at once, as
        // saturated, still beat 4 by 1.19x). RAM, disks and the network stop it whatever the gain.
        const bool check_cpu = growth && devices_[d].kind == DeviceKind::kGpu && plan.burst <= 1;
        // A growth step's newcomers (one, or a burst) are measured (on the CPU device: rated) and judged together
        // before the next step, and the step starts from a degree shown worthwhile: runs above it (an inconclusive
        // check's) end first, or a check would only compare one unproven degree with the next.
        if (growth && burst_left == 0) {
          const double window_s = WindowOf(plan);
          if (!plan.probe.newcomers.empty() || unmeasured || counted > plan.proven ||
              now < plan.changed_t + window_s / 2 || HasPoorMix(CountedMix(d, now), std::nullopt)) {
            // Rule 12: the next step's newcomers may start up while the wait ends.
            if (ahead.empty() && HostPressure(host, params_, check_cpu).none())
              StartAhead(d, devices[d], now, admitted);
            break;
          }
          burst_left = plan.burst;
          // Those started ahead are the step's first newcomers.
          if (!ahead.empty() && (burst_left -= Adopt(d, now)) <= 0) break;
        }
        const Pressure pressure = HostPressure(host, params_, check_cpu);
        Block(d, pressure);
        if (!pressure.none()) break;
        pick = Pick(d, devices[d], now);
      }
      if (!pick) break;
      const std::string key = pick->second;
      Place(key, pick->first, d, now, growth);
      admitted.push_back(Admission{key, d, growth});
      if (growth && --burst_left == 0) break;
    }
  }
  return admitted;
}

void Packer::StartRemembered(int device, const std::string& shape) {
  auto r = remembered_.find(shape);
  if (r == remembered_.end() || r->second.degree < 2 || (!params_.pack_clocked && clocked_.count(shape))) return;
  Plan& plan = plans_[device];
  // A held degree is checked again by growing to it from one run fewer; a degree that was only proven (that sweep
  // ended still growing) is where growth goes on from; runs too short to measure could verify nothing.
  const RememberedShape& known = r->second;
  const bool check = known.held && !known.short_runs;
  plan.proven = check ? known.degree - 1 : known.degree;
  notes_.push_back(fmt::format(
      "{}: starting at {} run{} at once: an earlier sweep of this command on this machine {} {}{}", devices_[device].name,
      plan.proven, plan.proven == 1 ? "" : "s", known.held ? "held" : "proved", known.degree,
      known.short_runs ? " (its runs end before they can be measured, so it is taken as it was)"
      : check          ? "; one gain check verifies it"
                       : "; growth goes on from there"));
}

void Packer::Remember(const std::string& shape, const RememberedShape& remembered) {
  remembered_[shape] = remembered;
  Shape& s = shapes_[shape];
  if (remembered.mem_bytes > 0) {
    s.measured = true;
    s.mem_bytes = std::max(s.mem_bytes, remembered.mem_bytes);
  }
  if (remembered.clocked && !clocked_.count(shape))
    clocked_[shape] = "an earlier sweep of this command found its runs stop on the clock";
  // One more than the held degree did not pay: that mix is not formed again.
  if (remembered.held && remembered.degree >= 1) poor_mixes_.insert(Mix(static_cast<size_t>(remembered.degree) + 1, shape));
}

void Packer::Finished(const std::string& shape, double duration_s, std::optional<double> trained, int degree) {
  if (!trained || *trained <= 0) return;
  Shape& s = shapes_[shape];
  s.ended.emplace_back(duration_s, *trained);
  if (degree >= 1 && duration_s > 0 && std::isfinite(duration_s)) s.rate_at[degree].push_back(*trained / duration_s);
  if (clocked_.count(shape)) return;
  std::vector<EndedRun> ended;
  for (const auto& [d, t] : s.ended) ended.push_back({d, t});
  const std::optional<ClockJudgement> judged = JudgeClock(ended);
  if (!judged || !judged->on_clock) return;
  clocked_[shape] = judged->why;
  notes_.push_back(fmt::format("{}runs stop on the clock: {}; packed, each would train less in the same time, so {}",
                               shape.empty() ? "" : shape + ": ", judged->why,
                               params_.pack_clocked ? "they are packed anyway (time_budget_runs: pack)"
                                                    : "they run one per device (time_budget_runs: pack to pack them)"));
}

std::map<std::string, RememberedShape> Packer::Learnt() const {
  std::map<std::string, RememberedShape> out;
  const std::map<std::string, int> held = HeldDegrees();
  for (const auto& [shape, s] : shapes_) {
    if (!s.measured && s.finished == 0 && !remembered_.count(shape)) continue;
    // What this sweep saw, over what it was told where it saw nothing of the kind.
    auto told = remembered_.find(shape);
    RememberedShape r = told != remembered_.end() ? told->second : RememberedShape{};
    auto h = held.find(shape);
    r.held = h != held.end();
    r.degree = r.held ? std::max(1, h->second) : std::max(s.proven, told != remembered_.end() ? r.degree : 1);
    // A degree never judged (a burst whose runs ended first) that trained faster, read from the runs' own ends.
    if (!r.held) r.degree = std::max(r.degree, HindsightDegree(s).value_or(1));
    r.mem_bytes = s.mem_bytes;
    if (s.finished > 0) r.short_runs = 2 * s.finished_unmeasured >= s.finished;
    r.clocked = clocked_.count(shape) > 0;
    out[shape] = r;
  }
  return out;
}

std::optional<int> Packer::HindsightDegree(const Shape& s) const {
  std::optional<int> best;
  double best_rate = 0;
  int compared = 0;
  for (const auto& [degree, rates] : s.rate_at) {
    if (rates.size() < 2) continue;
    ++compared;
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    const double progress = degree * median;
    if (!best || progress >= best_rate * std::pow(1 + params_.min_gain, degree - *best)) {
      best = degree;
      best_rate = progress;
    }
  }
  // One degree alone shows nothing trained faster than anything.
  return compared >= 2 ? best : std::nullopt;
}

void Packer::Learn(const std::string& shape, const Footprint& footprint) {
  Shape& s = shapes_[shape];
  s.measured = true;
  s.mem_bytes = std::max(s.mem_bytes, footprint.mem_bytes);
}

bool Packer::Reading(Live& run, const Footprint& footprint, double window_s,
                     const std::function<bool(const Live&)>& ready) {
  plans_[run.device].window_s = window_s;
  run.footprint = footprint;
  Learn(run.shape, footprint);
  const std::vector<std::string>& newcomers = plans_[run.device].probe.newcomers;
  // A burst is judged once its last newcomer is ready.
  return std::find(newcomers.begin(), newcomers.end(), run.key) != newcomers.end() &&
         std::all_of(newcomers.begin(), newcomers.end(), [&](const std::string& k) { return ready(where_.at(k)); });
}

void Packer::Measured(const std::string& key, double now, const Footprint& footprint, const RateSource& rates,
                      std::optional<double> window_s) {
  auto it = where_.find(key);
  if (it == where_.end() || it->second.measured) return;
  it->second.measured = true;
  const double w = window_s.value_or(params_.window_s);
  if (Reading(it->second, footprint, w, [](const Live& r) { return r.measured; }))
    Evaluate(it->second.device, now, rates, w);
}

void Packer::Rated(const std::string& key, double now, const Footprint& footprint, const RateSource& rates,
                   std::optional<double> window_s) {
  auto it = where_.find(key);
  if (it == where_.end() || Known(it->second) || devices_[it->second.device].kind != DeviceKind::kCpu) return;
  it->second.rated = true;
  const double w = window_s.value_or(params_.window_s);
  if (Reading(it->second, footprint, w, [this](const Live& r) { return Known(r); }))
    EarlyVerdict(it->second.device, now, rates, w);
}

std::optional<double> Packer::RunSeconds(const std::string& shape) const {
  auto it = shapes_.find(shape);
  if (it == shapes_.end() || it->second.ended.empty()) return std::nullopt;
  std::vector<double> seconds;
  for (const auto& [d, trained] : it->second.ended) seconds.push_back(d);
  return UpperMedian(std::move(seconds));
}

void Packer::Stepping(const std::string& key, double t, double warmup_s, double window_s) {
  auto it = where_.find(key);
  if (it == where_.end() || it->second.stepped_t) return;
  Live& run = it->second;
  run.stepped_t = t;
  run.warmup_s = warmup_s;
  run.settled_t = t + warmup_s + window_s;
  shapes_[run.shape].startups.push_back(std::max(0.0, t - run.placed_t));
  // The training runs changed: rule 10's span up to here counts for none, and the newcomer is not warm yet.
  Plan& plan = plans_[run.device];
  plan.touched_t = std::max(plan.touched_t, t);
  if (plan.trained) plan.trained->warm = false;
  // A newcomer started ahead (rule 12) joins the device's load here: its step's before-window ends at this step.
  Probe& probe = plan.probe;
  if (probe.adopted && !probe.stepped &&
      std::find(probe.newcomers.begin(), probe.newcomers.end(), key) != probe.newcomers.end())
    probe.admitted_t = t, probe.stepped = true;
}

std::optional<double> Packer::StartupSeconds(const std::string& shape) const {
  auto it = shapes_.find(shape);
  if (it == shapes_.end() || it->second.startups.empty()) return std::nullopt;
  return UpperMedian(it->second.startups);
}

void Packer::Update(const std::string& key, const Footprint& footprint) {
  auto it = where_.find(key);
  if (it == where_.end()) return;
  it->second.footprint = footprint;
  if (Known(it->second)) Learn(it->second.shape, footprint);
}

std::optional<Packer::Ratio> Packer::MeanRatio(const Probe& probe, const RateSource& rates, double window_s,
                                              double after_t0, double now, double min_steps) const {
  // Each incumbent's rate after the admission over its rate before; training throughput where both windows
  // have it, else, for a run that reports no steps, CPU use where it is large enough to mean something. A run
  // that reports steps is judged by its throughput only: its CPU use during start-up or data preparation says
  // nothing about its training.
  struct {
    double mean = 0, low = 0, var = 0;
  } sum;
  int signalled = 0;
  for (const std::string& key : probe.incumbents) {
    const WindowRates before =
        rates.Rates(key, std::max(probe.admitted_t - window_s, probe.steady_t), probe.admitted_t);
    const WindowRates after = rates.Rates(key, after_t0, now);
    const bool steps = before.reports_steps || after.reports_steps;
    const bool throughput = before.samples_per_s && after.samples_per_s && *before.samples_per_s > 0;
    if (min_steps > 0) {
      // An early verdict reads every incumbent, from windows fine enough to resolve its rate; each window's rate
      // may be off by a step, so its lowest reading has one step fewer after and one more before.
      const double a = after.steps.value_or(0), b = before.steps.value_or(0);
      if (!throughput || a < min_steps || b < min_steps) return std::nullopt;
      const double ratio = *after.samples_per_s / *before.samples_per_s;
      sum.mean += ratio;
      sum.low += ratio * (1 - 1 / a) / (1 + 1 / b);
    } else if (throughput) {
      const double ratio = *after.samples_per_s / *before.samples_per_s;
      sum.mean += ratio;
      // Each window's count off by up to a step, uniformly and independently: the ratio's variance.
      if (after.steps && before.steps) {
        const double a = std::max(1.0, *after.steps), b = std::max(1.0, *before.steps);
        sum.var += ratio * ratio * (1 / (a * a) + 1 / (b * b)) / 3;
      }
    } else if (!steps && before.cpu_pct && after.cpu_pct && *before.cpu_pct >= params_.quiet_cpu_pct) {
      sum.mean += *after.cpu_pct / *before.cpu_pct;
    } else {
      continue;
    }
    ++signalled;
  }
  if (signalled == 0) return std::nullopt;
  // The highest reading of the mean: twice its spread above it.
  return Ratio{sum.mean / signalled, (min_steps > 0 ? sum.low : sum.mean) / signalled,
               (sum.mean + 2 * std::sqrt(sum.var)) / signalled};
}

namespace {

// n incumbents and k newcomers share one slowdown f (the mean after/before ratio): the progress rate went from n
// to f (n + k). Returns the whole gain and each newcomer's share, compounded.
std::pair<double, double> GainOf(double f, int n, int k) {
  const double gain = f * (n + k) / n - 1;
  return {gain, gain > -1 ? std::pow(1 + gain, 1.0 / k) - 1 : -1};
}

}  // namespace

void Packer::MarkProven(int device, int degree) {
  Plan& plan = plans_[device];
  const Mix mix = MixOf(device);
  plan.proven = std::max(plan.proven, degree);
  if (mix.front() == mix.back()) shapes_[mix.front()].proven = std::max(shapes_[mix.front()].proven, degree);
}

int Packer::BurstAfter(const Plan& plan, int degree, int k, double each) const {
  const int room = std::min(plan.cap, params_.max_per_device) - degree;
  return each >= params_.burst_gain && room > 1 ? std::min(2 * k, room) : 1;
}

void Packer::Prove(int device, int degree, int k, double gain, double each, const std::string& how) {
  Plan& plan = plans_[device];
  MarkProven(device, degree);
  plan.burst = BurstAfter(plan, degree, k, each);
  notes_.push_back(fmt::format("{}: degree {}{} raised the progress rate by {:+.0f}%{}{}{}", devices_[device].name,
                               degree, k > 1 ? fmt::format(" ({} newcomers at once)", k) : "", 100 * gain,
                               k > 1 ? fmt::format(" ({:+.0f}% each)", 100 * each) : "", how,
                               plan.burst > 1 ? fmt::format("; the next step tries {} more at once", plan.burst) : ""));
}

void Packer::EarlyVerdict(int device, double now, const RateSource& rates, double window_s) {
  Plan& plan = plans_[device];
  const Probe& probe = plan.probe;
  // A departure meanwhile is the full check's to report.
  if (probe.newcomers.empty() || probe.incumbents.empty() || plan.departures != probe.departures) return;
  const std::optional<Ratio> f = MeanRatio(probe, rates, window_s, now - window_s / 2, now, params_.early_steps);
  if (!f) return;
  const int k = static_cast<int>(probe.newcomers.size()), n = static_cast<int>(probe.incumbents.size());
  // Near enough to noise, or to the slow start's line, that the full windows decide.
  if (GainOf(f->low - params_.early_margin, n, k).second < params_.burst_gain) return;
  const auto [gain, each] = GainOf(f->mean, n, k);
  const int degree = probe.degree;
  plan.probe = Probe{};
  Prove(device, degree, k, gain, each, fmt::format(", read early (over {:.1f} s)", window_s / 2));
}

void Packer::Evaluate(int device, double now, const RateSource& rates, double window_s) {
  Plan& plan = plans_[device];
  const Probe probe = std::exchange(plan.probe, Probe{});
  const std::string& name = devices_[device].name;
  const int k = static_cast<int>(probe.newcomers.size());
  const std::string at_once = k > 1 ? fmt::format(" ({} newcomers at once)", k) : "";
  plan.burst = 1;  // unless this step earns a larger one
  if (plan.departures != probe.departures) {
    notes_.push_back(fmt::format("{}: degree {}{}: gain check inconclusive (a run left meanwhile)", name,
                                 probe.incumbents.size() + k, at_once));
    return;
  }
  // Newcomers started ahead (rule 12) that stepped before the runs there were past their warm-up left too short a
  // before-window to tell.
  if (probe.adopted && probe.admitted_t - std::max(probe.admitted_t - window_s, probe.steady_t) < window_s / 2) {
    notes_.push_back(fmt::format("{}: degree {}{}: gain check inconclusive (its newcomers began training before the "
                                 "runs there were steady)",
                                 name, probe.degree, at_once));
    return;
  }
  // The after-window ends where runs started ahead of the next step began training (rule 12).
  double end = now;
  for (const std::string& key : plan.runs) {
    const Live& run = where_.at(key);
    if (run.ahead && run.stepped_t) end = std::min(end, *run.stepped_t);
  }
  const int degree = probe.degree;
  const std::optional<Ratio> f = MeanRatio(probe, rates, window_s, end - window_s, end, 0);
  if (!f) {
    MarkProven(device, degree);
    notes_.push_back(
        fmt::format("{}: degree {}{}: its runs show no rate to compare (no throughput, little CPU); "
                    "growth continues",
                    name, degree, at_once));
    return;
  }
  const int n = static_cast<int>(probe.incumbents.size());
  const auto [gain, each] = GainOf(f->mean, n, k);
  if (each >= params_.min_gain) {
    Prove(device, degree, k, gain, each, "");
    return;
  }
  // The mix it tried: the degree of one shape, else the runs there now.
  Mix mix = MixOf(device);
  const bool one_shape = mix.front() == mix.back();
  // Windows too coarse to tell (a few steps each: its highest reading would pay): the runs' own progress decides,
  // where it can (rule 10), rather than noise.
  const auto [gain_high, each_high] = GainOf(f->high, n, k);
  if (each_high >= params_.min_gain && one_shape && ReadsProven(device, mix.front())) {
    plan.trial = std::max(plan.trial, degree);
    notes_.push_back(fmt::format(
        "{}: degree {}{}: gain check undecided ({:+.1f}%{}, but up to {:+.1f}% within a step in its windows): on "
        "trial, read from the runs' own progress",
        name, degree, at_once, 100 * gain, k > 1 ? fmt::format(", {:+.1f}% each", 100 * each) : "",
        100 * gain_high));
    return;
  }
  if (one_shape) mix = Mix(static_cast<size_t>(std::max(1, degree)), mix.front());
  poor_mixes_.insert(mix);
  notes_.push_back(
      fmt::format("{}: degree {}{} changed the progress rate by only {:+.1f}%{} (under {:.0f}%{}): {} is "
                  "not formed again",
                  name, degree, at_once, 100 * gain, k > 1 ? fmt::format(", {:+.1f}% each", 100 * each) : "",
                  100 * params_.min_gain, k > 1 ? " each" : "", FormatMix(mix)));
}

int Packer::Left(const std::string& key, LeaveReason reason, const Footprint& footprint, std::optional<double> now) {
  auto it = where_.find(key);
  if (it == where_.end()) return 0;
  const Live run = it->second;
  where_.erase(it);
  Plan& plan = plans_[run.device];
  // One still starting up changes no span of rule 10's.
  if (now && run.stepped_t) plan.touched_t = *now;
  else if (run.stepped_t) plan.untimed = true;
  const int before = static_cast<int>(plan.runs.size());
  plan.runs.erase(std::find(plan.runs.begin(), plan.runs.end(), key));
  // A run that finished before it was measured showed its whole footprint.
  if (!run.measured && reason == LeaveReason::kFinished) Learn(run.shape, footprint);
  if (reason == LeaveReason::kFinished) {
    ++shapes_[run.shape].finished;
    if (!run.measured) ++shapes_[run.shape].finished_unmeasured;
  }
  const auto& newcomers = plan.probe.newcomers;
  const bool newcomer = std::find(newcomers.begin(), newcomers.end(), key) != newcomers.end();
  // Rule 10: an incumbent that finished cut the check short; the device is refilled to the degree it tried, and the
  // device's own progress decides it, where it can: one shape, whose progress at the proven degree was read.
  if (!newcomer && !newcomers.empty() && reason == LeaveReason::kFinished && ReadsProven(run.device, run.shape) &&
      std::all_of(plan.runs.begin(), plan.runs.end(),
                  [&](const std::string& k) { return where_.at(k).shape == run.shape; }))
    plan.trial = std::max(plan.trial, plan.probe.degree);
  if (newcomer) {
    plan.probe = Probe{};
    plan.burst = 1;
  }
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

void Packer::Trained(int device, double now, double samples, double steps, bool warm) {
  Plan& plan = plans_[device];
  if (plan.trained && now <= plan.trained->t) return;  // no time passed: the last report stands
  const int training = static_cast<int>(std::count_if(
      plan.runs.begin(), plan.runs.end(), [&](const std::string& k) { return where_.at(k).stepped_t.has_value(); }));
  const std::optional<Plan::Report> last =
      std::exchange(plan.trained, Plan::Report{now, samples, steps, warm, training});
  const bool untimed = std::exchange(plan.untimed, false);
  const bool after_counted = std::exchange(plan.counted, false);
  // A span counts when one degree of one shape trained all of it, every training run warm from its start; runs
  // still starting up count for none (rule 11).
  if (training == 0 || !last || !last->warm || last->training != training || untimed || plan.touched_t > last->t ||
      samples < last->samples)
    return;
  const Mix mix = MixOf(device);
  if (mix.front() != mix.back()) return;
  Span& span = spans_[{mix.front(), training}];
  span.seconds += now - last->t;
  span.samples += samples - last->samples;
  span.steps += steps - last->steps;
  if (!after_counted || plan.touched_t >= last->t) ++span.pieces;
  plan.counted = true;
  ProveFromSpans(device);
}

std::optional<Packer::SpanRate> Packer::ReadSpan(const std::string& shape, int degree, double least_s) const {
  auto it = spans_.find({shape, degree});
  if (it == spans_.end()) return std::nullopt;
  const Span& s = it->second;
  if (s.seconds < least_s || s.samples <= 0 || s.steps < params_.early_steps * degree) return std::nullopt;
  // Each run's count over a piece is off by up to a step (its reports lag by up to one at either end), independently,
  // so the sum's spread is sqrt(degree x pieces / 3) steps; twice that.
  return SpanRate{s.samples / s.seconds, std::min(1.0, 2 * std::sqrt(degree * s.pieces / 3.0) / s.steps), s.seconds};
}

bool Packer::ReadsProven(int device, const std::string& shape) const {
  const Plan& plan = plans_[device];
  return ReadSpan(shape, plan.proven, WindowOf(plan) / 2).has_value();
}

void Packer::ProveFromSpans(int device) {
  Plan& plan = plans_[device];
  const std::string shape = MixOf(device).front();
  const double least_s = WindowOf(plan) / 2;
  auto read = [&](int degree) { return ReadSpan(shape, degree, least_s); };
  const int from = plan.proven;
  const std::optional<SpanRate> base = read(from);
  if (!base) return;
  // The highest degree that paid, each added run min_gain compounded, at its lowest reading less the margin.
  int to = from;
  double ratio = 0, low = 0;
  for (int e = from + 1; e <= std::min(plan.cap, params_.max_per_device); ++e) {
    const std::optional<SpanRate> r = read(e);
    if (!r) continue;
    const double lowest = r->rate * (1 - r->error) / (base->rate * (1 + base->error)) - params_.early_margin;
    if (lowest >= std::pow(1 + params_.min_gain, e - from)) to = e, ratio = r->rate / base->rate, low = lowest;
  }
  if (to < plan.trial && plan.trial > 0) {
    // The degree on trial, held long enough, does not pay even at its highest reading: its mix is poor, as a check's.
    const std::optional<SpanRate> r = read(plan.trial);
    if (r && r->rate * (1 + r->error) / (base->rate * (1 - base->error)) + params_.early_margin <
                 std::pow(1 + params_.min_gain, plan.trial - from)) {
      const Mix mix(static_cast<size_t>(plan.trial), shape);
      poor_mixes_.insert(mix);
      notes_.push_back(fmt::format(
          "{}: degree {} trained {:+.0f}% against degree {} (held {:.1f} s and {:.1f} s, read from the runs' own "
          "progress as they came and went; under {:.0f}% a run): {} is not formed again",
          devices_[device].name, plan.trial, 100 * (r->rate / base->rate - 1), from, r->seconds, base->seconds,
          100 * params_.min_gain, FormatMix(mix)));
      plan.trial = 0;
    }
  }
  if (to == from) return;
  MarkProven(device, to);
  if (to >= plan.trial) plan.trial = 0;
  if (!plan.probe.newcomers.empty() && plan.probe.degree <= to) plan.probe = Probe{};
  plan.burst = BurstAfter(plan, to, to - from, std::pow(low, 1.0 / (to - from)) - 1);
  notes_.push_back(fmt::format(
      "{}: degree {} trained {:+.0f}% faster than degree {} (held {:.1f} s and {:.1f} s, read from the runs' own "
      "progress as they came and went){}",
      devices_[device].name, to, 100 * (ratio - 1), from, read(to)->seconds, base->seconds,
      plan.burst > 1 ? fmt::format("; the next step tries {} more at once", plan.burst) : ""));
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
    v.probing = !plan.probe.newcomers.empty();
    v.burst = plan.burst;
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
