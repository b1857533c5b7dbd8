// Steady-state throughput from a growing series of observations: cut the warm-up, estimate samples/s with a
// confidence interval, and say when the estimate is good enough to stop measuring.
//
// How each source maps to observations (all times in seconds on CLOCK_MONOTONIC, std::chrono::steady_clock):
//   - cumulative helper reports (measure::ProgressAggregator): the difference between two reports of one
//     process, {t of the later report, time between the reports, samples between them}, stream = the pid.
//     Such intervals tile time, so the estimate is exactly samples done / time taken.
//   - per-step output lines ("step_s 0.0123" with a batch size of 64): {arrival time, 0.0123, 64}. Lines
//     printed every N steps cover only the last step each; the estimate is batch / mean step time.
//   - instantaneous rate lines ("840.2 samples/s", "12.3it/s" x batch): {arrival time, 1, rate}. A rate is a
//     one-second window; the estimate is the mean of the reported rates.
//
// Method. Time from the earliest interval start is cut into bins (`bin_s`, or about the spacing of the
// observations); each observation spreads its samples over the bins it overlaps, in proportion to the overlap,
// and each bin's rate is samples / covered time, summed over streams. Warm-up is cut with MSER-5 (White's
// Marginal Standard Error Rule on means of 5 bins): the truncation that minimises the standard error of the
// remaining mean, never more than half the bins. The steady part is split into at most `max_batches`
// consecutive batches; throughput is the ratio estimator sum(samples) / sum(covered time) per stream, summed
// over streams (not a mean of rates), and its 95% interval comes from the spread of the batches (linearised
// ratio variance, Student t quantile).
//
// Trend. A steady part that still trends is not steady, and a slow drift (caches warming, a clock ramping up)
// can outlast MSER's cut. A least-squares line through the batches against time measures it: the interval is
// widened to reach where the line ends (the rate now, when that lies outside the interval), a significant
// slope (95%) is drift, and convergence needs the data to bound the trend: the upper end of the 90% interval
// of |rate now - estimate| (two one-sided 5% tests) at most `trend_limit` targets. A drift too slow to show
// in the data measured so far cannot be seen by any of this; see docs/benchmarks.md for what it costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace sat::measure {

// `samples` were processed in the `duration_s` seconds that ended at `t_end_s`. Observations of one stream
// come from one worker; different streams (the processes of a multi-process run) work in parallel and their
// rates add. Invalid observations (non-finite values, duration_s <= 0, samples < 0) are rejected by Add.
// The fewest batches a trend line is fitted through (2 degrees of freedom).
inline constexpr int kMinTrendBatches = 4;

struct Observation {
  double t_end_s = 0;
  double duration_s = 0;
  double samples = 0;
  int64_t stream = 0;
};

struct EstimatorOptions {
  // Width of the time bins in seconds; 0 picks the median spacing between successive observations of a stream
  // (widened so that there are at most 4000 bins).
  double bin_s = 0;
  // Convergence needs all of: at least this many seconds of steady data, at least `min_batches` batches, a
  // relative half-width of the 95% interval at most `target_rel_half_width`, a warm-up cut below the limit
  // of half the data, no drift, and a trend bounded to `trend_limit` targets (trend_bound_rel).
  double min_steady_s = 3;
  int min_batches = 10;
  // Slow observations (a step of seconds) reach `min_batches` late: convergence may also come with
  // kMinTrendBatches batches (4, the fewest a trend line can be fitted through) once the steady part spans
  // `min_trend_s` seconds, enough to see a trend. So a few slow steps that agree may stop a measurement, while
  // the interval and the trend bound keep a noisy or moving one going; fast observations reach `min_batches`
  // first, as before.
  double min_trend_s = 12;
  double target_rel_half_width = 0.02;
  // Number of batches the steady part is split into for the interval (fewer while there are under 2 bins per
  // batch).
  int max_batches = 30;
  // Drift needs a statistically significant (95%) slope whose fitted difference between the halves is at
  // least this share of the estimate, so a very tight interval does not flag a negligible trend.
  double drift_min_rel = 0.01;
  // Convergence needs trend_bound_rel <= trend_limit * target_rel_half_width. Lower waits longer for slow
  // drifts to show; 1.5 costs a noisy flat series about a fifth more data (estimator_test.cc).
  double trend_limit = 1.5;
};

struct SteadyState {
  double samples_per_s = 0;  // ratio estimator over the steady part, summed over streams
  // 95% confidence interval, widened to reach the rate now on the trend line; -+infinity with fewer than 2
  // batches.
  double ci_low = -std::numeric_limits<double>::infinity();
  double ci_high = std::numeric_limits<double>::infinity();
  double rel_half_width = std::numeric_limits<double>::infinity();  // (ci_high - ci_low) / 2 / samples_per_s
  double start_t = 0;   // earliest interval start: the origin of warmup_s and of Series() times
  double warmup_s = 0;  // seconds from start_t to the end of the warm-up cut
  double steady_s = 0;  // seconds from the warm-up cut to the latest observation
  int n_batches = 0;
  // The steady part is long enough to stop on: min_steady_s seconds in min_batches batches (or kMinTrendBatches
  // over min_trend_s). Convergence needs it, and so does any early stop (core::StageOptions::stop_above).
  bool enough = false;
  bool converged = false;
  bool warmup_at_limit = false;  // the cut hit the half-of-the-data limit: steady state may not be reached
  bool drift = false;
  // (second half - first half) / samples_per_s along the steady part's trend line, also when not significant
  double drift_rel = 0;
  double trend_rel = 0;  // (rate now on the trend line - samples_per_s) / samples_per_s
  // Upper end of the 90% interval of |trend_rel|; +infinity with fewer than 4 batches.
  double trend_bound_rel = std::numeric_limits<double>::infinity();
  size_t observations_used = 0;       // ending after the warm-up cut
  size_t observations_discarded = 0;  // ending at or before the cut
  size_t observations_rejected = 0;   // invalid, never added
};

// One bin of the rate series, for reports and charts.
struct RatePoint {
  double t_s = 0;  // bin centre, seconds since SteadyState::start_t
  double samples_per_s = 0;
};

// Accumulates observations and recomputes the estimate on demand (O(n log n) in the number of observations).
// Not thread-safe; one owner feeds and reads it.
class SteadyStateEstimator {
 public:
  explicit SteadyStateEstimator(EstimatorOptions options = {});

  // Returns false (and counts it) when the observation is invalid. Order does not matter.
  bool Add(const Observation& observation);

  SteadyState Estimate() const;
  bool Converged() const { return Estimate().converged; }

  // Rate per bin with any data in it, in time order, warm-up included.
  std::vector<RatePoint> Series() const;

  const EstimatorOptions& options() const { return options_; }
  size_t size() const { return observations_.size(); }

 private:
  EstimatorOptions options_;
  std::vector<Observation> observations_;  // stream replaced by a dense index into streams_
  std::vector<int64_t> streams_;
  size_t rejected_ = 0;
};

}  // namespace sat::measure
