#include "sweep/meter.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sat::sweep {
using measure::MessageType;

RunMeter::RunMeter(double start_t, bool on_gpu, MeterOptions options, std::string run_id)
    : start_t_(start_t), on_gpu_(on_gpu), options_(options), run_id_(run_id), progress_(std::move(run_id)) {}

double RunMeter::Anchor() const { return first_step_t_.value_or(start_t_); }

void RunMeter::Shorten(const MeterOptions& shorter) {
  options_.warmup_s = std::min(options_.warmup_s, shorter.warmup_s);
  options_.window_s = std::min(options_.window_s, shorter.window_s);
}

bool RunMeter::StartingUp(double now) const {
  return announced_ && !first_step_t_ && now < start_t_ + options_.startup_limit_s;
}

void RunMeter::Add(const measure::HelperMessage& m) {
  if (m.run != run_id_) return;
  // The automatic layer patched torch: the training steps will come.
  if (m.type == MessageType::kHello && m.automatic) announced_ = true;
  if (m.type == MessageType::kLoader && m.loader.epoch_samples) epoch_samples_[m.pid] = *m.loader.epoch_samples;
  if (m.type != MessageType::kProgress && m.type != MessageType::kDone) return;
  announced_ = true;
  AddProgress(m, progress_.Add(m));
}

void RunMeter::AddProgress(const measure::HelperMessage& m, const std::optional<measure::Observation>& since_previous) {
  Stream& s = streams_[m.pid];
  const int64_t previous_steps = s.last_steps;
  const bool was_training = previous_steps > 0;
  s.last_steps = m.steps;
  // Before the process's first training step there is nothing to count: start-up.
  if (m.steps <= 0) return;
  if (!first_step_t_) {
    first_step_t_ = m.t;
    // The steady figures restart with training.
    for (SteadyMean* m : {&cpu_, &blocked_, &workers_}) m->RestartSteady();
  }
  if (!s.first) {
    s.first = s.last = Point{m.t, 0, 0, 0};
    s.points.push_back(s.last);
  } else {
    if (m.t <= s.last.t) return;  // out of order, or a repeat (a done right after a progress)
    Point p = s.last;
    p.t = m.t;
    // The interval counts when both reports were of training and the aggregator took it (no counter restart);
    // its time beyond the observation's duration is time in other loaders. Anything else is a gap of unknown
    // content: excluded whole.
    if (was_training && since_previous) {
      p.samples += since_previous->samples;
      p.steps += static_cast<double>(std::max<int64_t>(0, m.steps - previous_steps));
      p.excluded_s += std::max(0.0, (m.t - s.last.t) - since_previous->duration_s);
    } else {
      p.excluded_s += m.t - s.last.t;
    }
    s.last = p;
    s.points.push_back(p);
  }
  if (!s.steady && m.t >= SteadyFrom()) s.steady = s.last;
  Trim(m.t);
}

RunMeter::Trained RunMeter::TrainedAt(double now, bool extrapolate) const {
  Trained sum;
  double samples = 0;
  int processes = 0;
  for (const auto& [pid, s] : streams_) {
    if (s.points.empty()) continue;
    ++processes;
    Point at = s.last;
    if (extrapolate && s.points.size() >= 2) {
      const Point& before = s.points[s.points.size() - 2];
      const double span = at.t - before.t;
      const double ahead = std::clamp(now - at.t, 0.0, span);
      if (span > 0) {
        at.samples += (at.samples - before.samples) * ahead / span;
        at.steps += (at.steps - before.steps) * ahead / span;
      }
    }
    samples += at.samples;
    sum.steps += at.steps;
  }
  sum.samples = samples > 0 ? samples : sum.steps;
  sum.steps /= std::max(1, processes);
  return sum;
}

void RunMeter::SteadyMean::Add(double v, bool steady) {
  sum_all_ += v;
  ++n_all_;
  if (steady) {
    sum_steady_ += v;
    ++n_steady_;
  }
}

std::optional<double> RunMeter::SteadyMean::Mean() const {
  if (n_steady_ > 0) return sum_steady_ / n_steady_;
  if (n_all_ > 0) return sum_all_ / n_all_;
  return std::nullopt;
}

void RunMeter::AddTree(const TreeReading& reading) {
  readings_.push_back(reading);
  if (reading.gpu_mem_bytes) {
    seen_gpu_mem_ = seen_gpu_mem_ || *reading.gpu_mem_bytes > 0;
    max_gpu_mem_ = std::max(max_gpu_mem_, *reading.gpu_mem_bytes);
  }
  if (reading.rss_bytes) {
    seen_rss_ = true;
    max_rss_ = std::max(max_rss_, *reading.rss_bytes);
  }
  const bool steady = reading.t >= SteadyFrom();
  // The process states and workers over the same readings as the CPU: those of a live tree after its first.
  if (reading.cpu_pct) {
    cpu_.Add(*reading.cpu_pct, steady);
    blocked_.Add(reading.blocked, steady);
    workers_.Add(reading.workers, steady);
    if (first_step_t_ && reading.t >= *first_step_t_) {
      training_cpu_.Add(*reading.cpu_pct);
      training_blocked_.Add(reading.blocked);
      training_workers_.Add(reading.workers);
    }
  }
  Trim(reading.t);
}

void RunMeter::Trim(double now) {
  // A gain check compares a window from before a newcomer's admission with one after it was measured, which
  // is at most warmup + window + max_wait later; keep comfortably more than that.
  const double keep_s = options_.warmup_s + 3 * options_.window_s + options_.max_wait_s + 60;
  for (auto& [pid, s] : streams_) {
    while (s.points.size() > 2 && s.points.front().t < now - keep_s) s.points.pop_front();
  }
  while (readings_.size() > 2 && readings_.front().t < now - keep_s) readings_.pop_front();
}

bool RunMeter::Rated(double now) const {
  const double h = options_.window_s / 2;
  if (!first_step_t_ || now < *first_step_t_ + 2 * h) return false;
  // Two half windows of training at one rate, each read from enough steps to tell: past its warm-up, or without one.
  const WindowRates earlier = Rates(now - 2 * h, now - h), later = Rates(now - h, now);
  if (!earlier.samples_per_s || !later.samples_per_s || *earlier.samples_per_s <= 0) return false;
  if (earlier.steps.value_or(0) < options_.rated_steps || later.steps.value_or(0) < options_.rated_steps) return false;
  return std::abs(*later.samples_per_s / *earlier.samples_per_s - 1) <= options_.rated_tolerance;
}

bool RunMeter::Measured(double now) const {
  if (StartingUp(now)) return false;
  const double ready = Anchor() + options_.warmup_s + options_.window_s;
  if (now < ready) return false;
  if (now >= ready + options_.max_wait_s) return true;
  // Until a GPU run steps or holds GPU memory, its footprint on the device is still to come.
  if (on_gpu_ && !first_step_t_ && !seen_gpu_mem_) return false;
  // Memory still growing: the footprint is not known yet.
  std::optional<uint64_t> lo, hi;
  for (const TreeReading& r : readings_) {
    if (r.t < now - options_.window_s) continue;
    const std::optional<uint64_t> mem = on_gpu_ ? r.gpu_mem_bytes : r.rss_bytes;
    if (!mem) continue;
    lo = lo ? std::min(*lo, *mem) : *mem;
    hi = hi ? std::max(*hi, *mem) : *mem;
  }
  if (!lo) return true;  // nothing to judge flatness by (no NVML process list, or /proc unreadable)
  return static_cast<double>(*hi) <= (1 + options_.flat_tolerance) * static_cast<double>(*lo);
}

namespace {

// The point at `t` by linear interpolation between the kept points (t within their span).
template <class Points, class P = typename Points::value_type>
P At(const Points& points, double t) {
  if (t <= points.front().t) return points.front();
  if (t >= points.back().t) return points.back();
  auto after = std::upper_bound(points.begin(), points.end(), t, [](double value, const P& p) { return value < p.t; });
  const P& b = *after;
  const P& a = *(after - 1);
  const double f = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1;
  return P{t, a.samples + (b.samples - a.samples) * f, a.excluded_s + (b.excluded_s - a.excluded_s) * f,
           a.steps + (b.steps - a.steps) * f};
}

}  // namespace

WindowRates RunMeter::Rates(double t0, double t1) const {
  WindowRates rates;
  rates.reports_steps = first_step_t_.has_value();
  if (t1 <= t0) return rates;
  // Reports come every 0.1 s or so; clip the window to the span each process's reports cover, and want half of
  // the window to be training time.
  for (const auto& [pid, s] : streams_) {
    if (s.points.size() < 2) continue;
    const double from = std::max(t0, s.points.front().t);
    const double to = std::min(t1, s.points.back().t);
    if (to <= from) continue;
    const Point a = At(s.points, from), b = At(s.points, to);
    const double training_s = (to - from) - (b.excluded_s - a.excluded_s);
    if (training_s < (t1 - t0) / 2) continue;
    rates.samples_per_s = rates.samples_per_s.value_or(0) + std::max(0.0, b.samples - a.samples) / training_s;
    // The fewest steps of any process: the window's resolution is its slowest counter's.
    const double steps = std::max(0.0, b.steps - a.steps);
    rates.steps = rates.steps ? std::min(*rates.steps, steps) : steps;
  }
  double sum = 0;
  int n = 0;
  for (const TreeReading& r : readings_) {
    if (r.t <= t0 || r.t > t1 || !r.cpu_pct) continue;
    sum += *r.cpu_pct;
    ++n;
  }
  if (n > 0) rates.cpu_pct = sum / n;
  return rates;
}

std::optional<TrainingSoFar> RunMeter::Training() const {
  if (!first_step_t_) return std::nullopt;
  TrainingSoFar t;
  t.startup_s = std::max(0.0, *first_step_t_ - start_t_);
  double last = *first_step_t_;
  for (const auto& [pid, s] : streams_) {
    if (s.first) last = std::max(last, s.last.t);
  }
  if (!readings_.empty()) last = std::max(last, readings_.back().t);
  t.trained_s = last - *first_step_t_;
  t.readings = training_cpu_.n;
  t.cpu_pct = training_cpu_.Mean();
  t.blocked = training_blocked_.Mean();
  t.workers = training_workers_.Mean();
  t.wait_share = totals().WaitShare();
  t.samples_per_s = Summary().throughput_samples_per_s;
  t.samples = totals().samples;
  // Every process that trains must have said how long its epoch is.
  if (!epoch_samples_.empty() && epoch_samples_.size() >= streams_.size()) {
    double epoch = 0;
    for (const auto& [pid, n] : epoch_samples_) epoch += static_cast<double>(n);
    t.epoch_samples = epoch;
  }
  return t;
}

Footprint RunMeter::footprint() const {
  Footprint f;
  const int64_t helper_mem = std::max(totals().mem_reserved_bytes.value_or(0), totals().mem_peak_bytes.value_or(0));
  f.mem_bytes = on_gpu_ ? std::max<uint64_t>(max_gpu_mem_, static_cast<uint64_t>(std::max<int64_t>(helper_mem, 0)))
                        : max_rss_;
  f.cpu_pct = cpu_.Mean().value_or(0);
  return f;
}

Measurements RunMeter::Summary() const {
  Measurements m;
  // Steady throughput when a process has a steady part worth the name, else over all its training; the
  // processes work in parallel, so their rates add.
  for (const auto& [pid, s] : streams_) {
    const bool steady = s.steady && s.last.t - s.steady->t >= options_.window_s / 2;
    const Point& first = steady ? *s.steady : *s.first;
    const double training_s = (s.last.t - first.t) - (s.last.excluded_s - first.excluded_s);
    if (training_s <= 0) continue;
    m.throughput_samples_per_s = m.throughput_samples_per_s.value_or(0) + (s.last.samples - first.samples) / training_s;
  }
  if (on_gpu_ && (seen_gpu_mem_ || footprint().mem_bytes > 0)) m.peak_gpu_memory_bytes = footprint().mem_bytes;
  if (cpu_.Any()) m.cpu_pct = footprint().cpu_pct;
  if (seen_rss_) m.rss_bytes = max_rss_;
  if (progress_.totals().processes > 0) m.samples = progress_.totals().samples;
  return m;
}

}  // namespace sat::sweep
