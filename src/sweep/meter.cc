#include "sweep/meter.h"

#include <algorithm>

namespace sat::sweep {

RunMeter::RunMeter(double start_t, bool on_gpu, MeterOptions options)
    : start_t_(start_t), on_gpu_(on_gpu), options_(options) {}

void RunMeter::AddProgress(double t, double cumulative_samples) {
  const Progress p{t, cumulative_samples};
  if (!first_progress_) first_progress_ = p;
  if (!progress_.empty() && t < progress_.back().t) return;  // reports arrive in order; ignore a stray late one
  progress_.push_back(p);
  last_progress_ = p;
  if (!steady_base_ && t >= SteadyFrom()) steady_base_ = p;
  Trim(t);
}

void RunMeter::AddHelperMemory(int64_t bytes) { helper_mem_ = std::max(helper_mem_, bytes); }

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
  if (reading.cpu_pct) {
    cpu_sum_all_ += *reading.cpu_pct;
    ++cpu_n_all_;
    if (reading.t >= SteadyFrom()) {
      cpu_sum_steady_ += *reading.cpu_pct;
      ++cpu_n_steady_;
    }
  }
  Trim(reading.t);
}

void RunMeter::Trim(double now) {
  // A gain check compares a window from before a newcomer's admission with one after it was measured, which
  // is at most warmup + window + max_wait later; keep comfortably more than that.
  const double keep_s = options_.warmup_s + 3 * options_.window_s + options_.max_wait_s + 60;
  while (progress_.size() > 2 && progress_.front().t < now - keep_s) progress_.pop_front();
  while (readings_.size() > 2 && readings_.front().t < now - keep_s) readings_.pop_front();
}

bool RunMeter::Measured(double now) const {
  const double ready = Anchor() + options_.warmup_s + options_.window_s;
  if (now < ready) return false;
  if (now >= ready + options_.max_wait_s) return true;
  // Until a GPU run reports or holds GPU memory, its footprint on the device is still to come.
  if (on_gpu_ && !first_progress_ && !seen_gpu_mem_) return false;
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

std::optional<double> RunMeter::SamplesAt(double t) const {
  if (progress_.empty() || t < progress_.front().t) return std::nullopt;
  if (t >= progress_.back().t) return progress_.back().samples;
  auto after = std::upper_bound(progress_.begin(), progress_.end(), t,
                                [](double value, const Progress& p) { return value < p.t; });
  const Progress& b = *after;
  const Progress& a = *(after - 1);
  if (b.t <= a.t) return b.samples;
  return a.samples + (b.samples - a.samples) * (t - a.t) / (b.t - a.t);
}

WindowRates RunMeter::Rates(double t0, double t1) const {
  WindowRates rates;
  if (t1 <= t0) return rates;
  // Reports come every 0.1 s or so; clip the window to the span they cover, and want half of it covered.
  if (!progress_.empty()) {
    const double from = std::max(t0, progress_.front().t);
    const double to = std::min(t1, progress_.back().t);
    if (to - from >= (t1 - t0) / 2) {
      const auto s0 = SamplesAt(from), s1 = SamplesAt(to);
      if (s0 && s1) rates.samples_per_s = std::max(0.0, *s1 - *s0) / (to - from);
    }
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

Footprint RunMeter::footprint() const {
  Footprint f;
  f.mem_bytes =
      on_gpu_ ? std::max<uint64_t>(max_gpu_mem_, static_cast<uint64_t>(std::max<int64_t>(helper_mem_, 0))) : max_rss_;
  if (cpu_n_steady_ > 0) {
    f.cpu_pct = cpu_sum_steady_ / cpu_n_steady_;
  } else if (cpu_n_all_ > 0) {
    f.cpu_pct = cpu_sum_all_ / cpu_n_all_;
  }
  return f;
}

Measurements RunMeter::Summary() const {
  Measurements m;
  if (last_progress_) {
    // Steady throughput when there is a steady part worth the name, else over every report.
    const bool steady = steady_base_ && last_progress_->t - steady_base_->t >= options_.window_s / 2;
    const Progress first = steady ? *steady_base_ : *first_progress_;
    if (last_progress_->t > first.t) {
      m.throughput_samples_per_s = (last_progress_->samples - first.samples) / (last_progress_->t - first.t);
    }
  }
  if (on_gpu_ && (seen_gpu_mem_ || helper_mem_ > 0)) m.peak_gpu_memory_bytes = footprint().mem_bytes;
  if (cpu_n_all_ > 0) m.cpu_pct = footprint().cpu_pct;
  if (seen_rss_) m.rss_bytes = max_rss_;
  return m;
}

}  // namespace sat::sweep
