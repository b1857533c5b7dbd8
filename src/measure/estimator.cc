#include "measure/estimator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

#include "measure/student_t.h"

namespace sat::measure {
namespace {

constexpr size_t kMaxBins = 4000;
constexpr size_t kMserBatch = 5;       // the "5" of MSER-5
constexpr size_t kMinMserBatches = 4;  // below this, too little data to tell warm-up from noise
constexpr size_t kMinBinsPerBatch = 2;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Samples and covered seconds of one stream in one bin (or one batch of bins).
struct Cell {
  double samples = 0;
  double covered_s = 0;
  void Add(const Cell& other) {
    samples += other.samples;
    covered_s += other.covered_s;
  }
};

// Observations spread over equal time bins; one cell per (bin, stream), bin-major.
struct Bins {
  double t0 = 0;
  double width = 0;
  double median_duration_s = 0;  // of the observations
  size_t n_streams = 1;
  std::vector<Cell> cells;

  size_t size() const { return cells.size() / n_streams; }
  const Cell& at(size_t bin, size_t stream) const { return cells[bin * n_streams + stream]; }
  Cell& at(size_t bin, size_t stream) { return cells[bin * n_streams + stream]; }
  bool Covered(size_t bin) const {
    for (size_t s = 0; s < n_streams; ++s) {
      if (at(bin, s).covered_s > 0) return true;
    }
    return false;
  }
  // Streams work in parallel, so their rates add.
  double Rate(size_t bin) const {
    double rate = 0;
    for (size_t s = 0; s < n_streams; ++s) {
      const Cell& c = at(bin, s);
      if (c.covered_s > 0) rate += c.samples / c.covered_s;
    }
    return rate;
  }
};

double Median(std::vector<double> v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// About one observation per bin per stream: the median spacing of successive observations within a stream.
double AutoBinWidth(const std::vector<Observation>& obs, size_t n_streams, double median_duration_s) {
  std::vector<std::vector<double>> ends(n_streams);
  for (const Observation& o : obs) ends[static_cast<size_t>(o.stream)].push_back(o.t_end_s);
  std::vector<double> gaps;
  for (std::vector<double>& e : ends) {
    std::sort(e.begin(), e.end());
    for (size_t i = 1; i < e.size(); ++i) {
      if (e[i] > e[i - 1]) gaps.push_back(e[i] - e[i - 1]);
    }
  }
  return gaps.empty() ? median_duration_s : Median(std::move(gaps));
}

// `obs` is non-empty and its streams are dense indices below n_streams.
Bins Spread(const std::vector<Observation>& obs, size_t n_streams, double bin_s) {
  double t0 = kInf, t1 = -kInf;
  for (const Observation& o : obs) {
    t0 = std::min(t0, o.t_end_s - o.duration_s);
    t1 = std::max(t1, o.t_end_s);
  }
  const double span = t1 - t0;
  std::vector<double> durations;
  for (const Observation& o : obs) durations.push_back(o.duration_s);
  const double median_duration_s = Median(std::move(durations));
  double width = bin_s > 0 ? bin_s : AutoBinWidth(obs, n_streams, median_duration_s);
  width = std::max(width, span / static_cast<double>(kMaxBins));
  const size_t n = std::max<size_t>(1, static_cast<size_t>(std::ceil(span / width - 1e-9)));

  Bins bins{t0, width, median_duration_s, n_streams, std::vector<Cell>(n * n_streams)};
  for (const Observation& o : obs) {
    const double a = o.t_end_s - o.duration_s, b = o.t_end_s;
    const auto bin_of = [&](double t) {
      return std::min(n - 1, static_cast<size_t>(std::max(0.0, std::floor((t - t0) / width))));
    };
    // Uniform rate within an observation: each bin gets the share of samples its overlap covers.
    for (size_t i = bin_of(a); i <= bin_of(b); ++i) {
      const double lo = std::max(a, t0 + static_cast<double>(i) * width);
      // The last bin takes everything to the end, whatever rounding left of the span.
      const double hi = i + 1 == n ? b : std::min(b, t0 + static_cast<double>(i + 1) * width);
      if (hi <= lo) continue;
      Cell& c = bins.at(i, static_cast<size_t>(o.stream));
      c.samples += o.samples * (hi - lo) / o.duration_s;
      c.covered_s += hi - lo;
    }
  }
  return bins;
}

struct MserCut {
  size_t batches = 0;  // MSER batches of kMserBatch rates discarded from the front
  bool at_limit = false;
};

// MSER-5: the truncation d (in batches of 5) minimising sum((Z_j - mean)^2) / (m - d)^2 over the remaining
// batch means Z_j, for d up to half the batches.
MserCut Mser5(const std::vector<double>& rates) {
  const size_t m = rates.size() / kMserBatch;
  if (m < kMinMserBatches) return {};
  std::vector<double> z(m);
  for (size_t j = 0; j < m; ++j) {
    double sum = 0;
    for (size_t i = 0; i < kMserBatch; ++i) sum += rates[j * kMserBatch + i];
    z[j] = sum / kMserBatch;
  }
  // Suffix sums give each candidate's mean and squared deviations in O(1).
  std::vector<double> sum(m + 1, 0), sum_sq(m + 1, 0);
  for (size_t j = m; j-- > 0;) {
    sum[j] = sum[j + 1] + z[j];
    sum_sq[j] = sum_sq[j + 1] + z[j] * z[j];
  }
  const size_t limit = m / 2;
  MserCut best;
  double best_stat = kInf;
  for (size_t d = 0; d <= limit; ++d) {
    const double k = static_cast<double>(m - d);
    const double ssd = std::max(0.0, sum_sq[d] - sum[d] * sum[d] / k);
    const double stat = ssd / (k * k);
    if (stat < best_stat) {
      best_stat = stat;
      best.batches = d;
    }
  }
  best.at_limit = best.batches == limit && limit > 0;
  return best;
}

// Steady bins summed into consecutive batches, with the ratio estimate over them.
struct Batches {
  size_t k = 0;                 // batches; 0 when the steady part holds less than two batches' worth
  std::vector<Cell> cells;      // batch-major, n_streams per batch (one batch when k is 0)
  std::vector<double> centres;  // mean bin centre of each batch, seconds since Bins::t0
  double estimate = 0;          // per stream sum(samples) / sum(covered), summed over streams
  // Each batch's deviation from the estimate in samples/s: the linearisation of the ratio,
  // e_j = sum_s (S_sj - R_s C_sj) / mean_j(C_sj). They sum to zero.
  std::vector<double> deviations;
};

// The steady bins `steady` (indices into `bins`) summed into k consecutive batches, as equal in bin count as
// integer division allows.
Batches Batch(const Bins& bins, std::span<const size_t> steady, size_t k) {
  const size_t n = std::max<size_t>(k, 1), n_streams = bins.n_streams;
  Batches b{k, std::vector<Cell>(n * n_streams), std::vector<double>(n, 0), 0, std::vector<double>(n, 0)};
  std::vector<size_t> count(n, 0);
  for (size_t i = 0; i < steady.size(); ++i) {
    const size_t j = i * n / steady.size();
    for (size_t s = 0; s < n_streams; ++s) b.cells[j * n_streams + s].Add(bins.at(steady[i], s));
    b.centres[j] += (static_cast<double>(steady[i]) + 0.5) * bins.width;
    ++count[j];
  }
  for (size_t j = 0; j < n; ++j) {
    if (count[j] > 0) b.centres[j] /= static_cast<double>(count[j]);
  }
  std::vector<double> ratio(n_streams, 0), mean_cover(n_streams, 0);
  for (size_t s = 0; s < n_streams; ++s) {
    Cell total;
    for (size_t j = 0; j < n; ++j) total.Add(b.cells[j * n_streams + s]);
    if (total.covered_s <= 0) continue;
    ratio[s] = total.samples / total.covered_s;
    mean_cover[s] = total.covered_s / static_cast<double>(n);
    b.estimate += ratio[s];
  }
  for (size_t j = 0; j < n; ++j) {
    for (size_t s = 0; s < n_streams; ++s) {
      if (mean_cover[s] <= 0) continue;
      const Cell& c = b.cells[j * n_streams + s];
      b.deviations[j] += (c.samples - ratio[s] * c.covered_s) / mean_cover[s];
    }
  }
  return b;
}

// Variance of the ratio estimate from the spread of the batches: sum_j e_j^2 / (k (k - 1)).
double RatioVariance(const Batches& b) {
  if (b.k < 2) return kInf;
  double sum_sq = 0;
  for (double e : b.deviations) sum_sq += e * e;
  return sum_sq / static_cast<double>(b.k * (b.k - 1));
}

// Least-squares line through the batch deviations against the batch centres.
struct Trend {
  double slope = 0;  // samples/s per second
  double slope_se = kInf;
  int dof = 0;
  double x_mean = 0;  // mean batch centre, seconds since Bins::t0
};

Trend FitTrend(const Batches& b) {
  Trend t;
  if (b.k < static_cast<size_t>(kMinTrendBatches)) return t;
  const double k = static_cast<double>(b.k);
  t.x_mean = std::accumulate(b.centres.begin(), b.centres.end(), 0.0) / k;
  const double e_mean = std::accumulate(b.deviations.begin(), b.deviations.end(), 0.0) / k;
  double sxx = 0, sxe = 0;
  for (size_t j = 0; j < b.k; ++j) {
    sxx += (b.centres[j] - t.x_mean) * (b.centres[j] - t.x_mean);
    sxe += (b.centres[j] - t.x_mean) * (b.deviations[j] - e_mean);
  }
  if (sxx <= 0) return t;
  t.slope = sxe / sxx;
  double rss = 0;
  for (size_t j = 0; j < b.k; ++j) {
    const double r = b.deviations[j] - e_mean - t.slope * (b.centres[j] - t.x_mean);
    rss += r * r;
  }
  t.dof = static_cast<int>(b.k) - 2;
  t.slope_se = std::sqrt(rss / t.dof / sxx);
  return t;
}

}  // namespace

SteadyStateEstimator::SteadyStateEstimator(EstimatorOptions options) : options_(options) {}

bool SteadyStateEstimator::Add(const Observation& observation) {
  const Observation& o = observation;
  if (!std::isfinite(o.t_end_s) || !std::isfinite(o.duration_s) || !std::isfinite(o.samples) || o.duration_s <= 0 ||
      o.samples < 0) {
    ++rejected_;
    return false;
  }
  auto it = std::find(streams_.begin(), streams_.end(), o.stream);
  if (it == streams_.end()) it = streams_.insert(streams_.end(), o.stream);
  Observation dense = o;
  dense.stream = it - streams_.begin();
  observations_.push_back(dense);
  return true;
}

std::vector<RatePoint> SteadyStateEstimator::Series() const {
  std::vector<RatePoint> series;
  if (observations_.empty()) return series;
  const Bins bins = Spread(observations_, streams_.size(), options_.bin_s);
  for (size_t i = 0; i < bins.size(); ++i) {
    if (bins.Covered(i)) series.push_back({(static_cast<double>(i) + 0.5) * bins.width, bins.Rate(i)});
  }
  return series;
}

SteadyState SteadyStateEstimator::Estimate() const {
  SteadyState r;
  r.observations_rejected = rejected_;
  if (observations_.empty()) return r;
  const size_t n_streams = streams_.size();
  const Bins bins = Spread(observations_, n_streams, options_.bin_s);

  // Only bins with data take part: sparse per-step lines leave gaps between them.
  std::vector<size_t> covered;
  std::vector<double> rates;
  for (size_t i = 0; i < bins.size(); ++i) {
    if (!bins.Covered(i)) continue;
    covered.push_back(i);
    rates.push_back(bins.Rate(i));
  }

  // Warm-up: cut where the remaining series has the smallest standard error of its mean.
  const MserCut cut = Mser5(rates);
  const size_t first = cut.batches * kMserBatch;
  r.start_t = bins.t0;
  const double cut_t = bins.t0 + static_cast<double>(covered[first]) * bins.width;
  double t1 = -kInf;
  for (const Observation& o : observations_) {
    t1 = std::max(t1, o.t_end_s);
    if (first > 0 && o.t_end_s <= cut_t) {
      ++r.observations_discarded;
    } else {
      ++r.observations_used;
    }
  }
  r.warmup_s = cut_t - bins.t0;
  r.steady_s = t1 - cut_t;
  r.warmup_at_limit = cut.at_limit;

  // Batches for the interval. Each spans at least one observation's duration: overlapping windows (rate
  // lines) would otherwise correlate neighbouring batches and make the interval too narrow.
  const std::span<const size_t> steady = std::span(covered).subspan(first);
  const size_t bins_per_batch =
      std::max(kMinBinsPerBatch, static_cast<size_t>(std::ceil(bins.median_duration_s / bins.width - 1e-9)));
  const size_t k = std::min(static_cast<size_t>(std::max(options_.max_batches, 1)), steady.size() / bins_per_batch);
  const Batches batches = Batch(bins, steady, k);
  r.samples_per_s = batches.estimate;
  r.n_batches = static_cast<int>(k);
  if (k >= 2 && r.samples_per_s > 0) {
    const double half = StudentT975(static_cast<int>(k) - 1) * std::sqrt(RatioVariance(batches));
    r.ci_low = r.samples_per_s - half;
    r.ci_high = r.samples_per_s + half;
  }

  // Trend: a line through the batches. A steady part that still trends is not steady: the interval reaches
  // where the line ends (the rate now), a significant slope is drift, and convergence needs the data to
  // bound the trend (two one-sided 5% tests on the distance from the estimate to the rate now).
  const Trend trend = FitTrend(batches);
  if (std::isfinite(trend.slope_se) && r.samples_per_s > 0) {
    const double lever = t1 - bins.t0 - trend.x_mean;  // seconds from the batches' mean centre to the end
    const double now = r.samples_per_s + trend.slope * lever;
    r.ci_low = std::min(r.ci_low, now);
    r.ci_high = std::max(r.ci_high, now);
    r.trend_rel = (now - r.samples_per_s) / r.samples_per_s;
    r.trend_bound_rel = (std::abs(trend.slope) + StudentT95(trend.dof) * trend.slope_se) * lever / r.samples_per_s;
    // The line's difference between the mean centres of the second and the first half of the batches.
    const size_t h = k / 2;
    const auto mean_centre = [&](size_t a, size_t b) {
      return std::accumulate(batches.centres.begin() + static_cast<std::ptrdiff_t>(a),
                             batches.centres.begin() + static_cast<std::ptrdiff_t>(b), 0.0) /
             static_cast<double>(b - a);
    };
    r.drift_rel = trend.slope * (mean_centre(h, k) - mean_centre(0, h)) / r.samples_per_s;
    r.drift = std::abs(trend.slope) > StudentT975(trend.dof) * trend.slope_se &&
              std::abs(r.drift_rel) >= options_.drift_min_rel;
  }
  if (k >= 2 && r.samples_per_s > 0) r.rel_half_width = (r.ci_high - r.ci_low) / 2 / r.samples_per_s;

  r.enough = r.steady_s >= options_.min_steady_s &&
             (r.n_batches >= options_.min_batches ||
              (r.n_batches >= kMinTrendBatches && r.steady_s >= options_.min_trend_s));
  r.converged = r.enough &&
                r.rel_half_width <= options_.target_rel_half_width && !r.warmup_at_limit && !r.drift &&
                r.trend_bound_rel <= options_.trend_limit * options_.target_rel_half_width;
  return r;
}

}  // namespace sat::measure
