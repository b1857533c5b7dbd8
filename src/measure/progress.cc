#include "measure/progress.h"

#include <algorithm>
#include <utility>

namespace sat::measure {
namespace {

double Share(double part, double whole) { return whole > 0 ? part / whole : 0; }

template <class T>
void KeepMax(std::optional<T>& best, const std::optional<T>& candidate) {
  if (candidate && (!best || *candidate > *best)) best = candidate;
}

}  // namespace

double ProgressTotals::WaitShare() const { return Share(wait_s, wait_s + step_s); }

std::map<std::string, double> ProgressTotals::PhaseShares() const {
  std::map<std::string, double> shares;
  for (const auto& [name, seconds] : phases_s) shares[name] = Share(seconds, wait_s + step_s);
  return shares;
}

ProgressAggregator::ProgressAggregator(std::string run_id) : run_id_(std::move(run_id)) {}

std::optional<Observation> ProgressAggregator::Add(const HelperMessage& message) {
  const HelperMessage& m = message;
  if (m.run != run_id_ || (m.type != MessageType::kProgress && m.type != MessageType::kDone)) return std::nullopt;
  const Counters now{m.t,      m.steps,      m.samples, m.wait_s, m.step_s, m.excluded_s.value_or(0),
                     m.before_backward_s.value_or(0), m.phases};
  KeepMax(totals_.mem_peak_bytes, m.mem_peak_bytes);
  KeepMax(totals_.mem_reserved_bytes, m.mem_reserved_bytes);

  auto [it, first_report] = processes_.try_emplace(m.pid);
  Process& p = it->second;
  if (m.rank) p.rank = m.rank;
  p.before_backward = p.before_backward || m.before_backward_s.has_value();
  if (m.type == MessageType::kDone) {
    p.done = true;
    totals_.done_reason = m.done_reason;
  }
  std::optional<Observation> observation;
  const bool went_back = now.steps < p.last.steps || now.samples < p.last.samples || now.wait_s < p.last.wait_s ||
                         now.step_s < p.last.step_s || now.excluded_s < p.last.excluded_s;
  if (!first_report && went_back) {
    // The helper started counting again: keep what was counted before, and take this report as a new baseline.
    ++resets_;
    p.carried.Add(p.last);
    p.base = now;
  } else if (!first_report && now.t > p.last.t) {
    const double elapsed = now.t - p.last.t;
    const double training = elapsed - (now.excluded_s - p.last.excluded_s);
    const double duration = std::max(training, std::min(elapsed, kMinObservationS));
    observation = Observation{now.t, duration, now.samples - p.last.samples, m.pid};
  }
  if (first_report) p.base = now;
  p.last = now;
  Recount();
  return observation;
}

void ProgressAggregator::Counters::Add(const Counters& other) {
  steps += other.steps;
  samples += other.samples;
  wait_s += other.wait_s;
  step_s += other.step_s;
  excluded_s += other.excluded_s;
  before_backward_s += other.before_backward_s;
  for (const auto& [name, seconds] : other.phases_s) phases_s[name] += seconds;
}

void ProgressAggregator::Recount() {
  Counters sum;
  totals_.processes_done = 0;
  totals_.per_process.clear();
  for (const auto& [pid, p] : processes_) {
    sum.Add(p.carried);
    sum.Add(p.last);
    totals_.processes_done += p.done ? 1 : 0;
    Counters own = p.carried;
    own.Add(p.last);
    if (own.steps == 0) continue;
    ProcessTotals t;
    t.pid = pid;
    t.rank = p.rank;
    t.steps = own.steps;
    t.samples = own.samples;
    t.wait_s = own.wait_s;
    t.step_s = own.step_s;
    if (auto after = own.phases_s.find("after_step"); after != own.phases_s.end()) t.after_step_s = after->second;
    if (p.before_backward) t.before_backward_s = own.before_backward_s;
    const double span = (p.last.t - p.base.t) - (p.last.excluded_s - p.base.excluded_s);
    if (span > 0) t.samples_per_s = (p.last.samples - p.base.samples) / span;
    totals_.per_process.push_back(std::move(t));
  }
  totals_.processes = static_cast<int>(processes_.size());
  totals_.steps = sum.steps;
  totals_.samples = sum.samples;
  totals_.wait_s = sum.wait_s;
  totals_.step_s = sum.step_s;
  totals_.excluded_s = sum.excluded_s;
  totals_.phases_s = std::move(sum.phases_s);
}

}  // namespace sat::measure
