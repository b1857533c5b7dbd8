#include "measure/estimator.h"

#include <algorithm>
#include <cmath>
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

struct RatioStats {
  double estimate = 0;
  double variance = kInf;  // of the estimate
};

// Ratio estimator over batches [begin, end) of `batches` (batch-major cells): per stream
// sum(samples) / sum(covered), summed over streams. Its variance linearises each stream's ratio:
// Var = sum_j e_j^2 / (k (k - 1)) with e_j = sum_s (S_sj - R_s C_sj) / mean_j(C_sj).
RatioStats Ratio(const std::vector<Cell>& batches, size_t n_streams, size_t begin, size_t end) {
  const size_t k = end - begin;
  std::vector<double> ratio(n_streams, 0), mean_cover(n_streams, 0);
  RatioStats out;
  for (size_t s = 0; s < n_streams; ++s) {
    Cell total;
    for (size_t j = begin; j < end; ++j) total.Add(batches[j * n_streams + s]);
    if (total.covered_s <= 0) continue;
    ratio[s] = total.samples / total.covered_s;
    mean_cover[s] = total.covered_s / static_cast<double>(k);
    out.estimate += ratio[s];
  }
  if (k < 2) return out;
  double sum_sq = 0;
  for (size_t j = begin; j < end; ++j) {
    double e = 0;
    for (size_t s = 0; s < n_streams; ++s) {
      if (mean_cover[s] <= 0) continue;
      const Cell& c = batches[j * n_streams + s];
      e += (c.samples - ratio[s] * c.covered_s) / mean_cover[s];
    }
    sum_sq += e * e;
  }
  out.variance = sum_sq / static_cast<double>(k * (k - 1));
  return out;
}

// The steady bins `steady` (indices into `bins`) summed into k consecutive batches (one when k is 0), as equal
// in bin count as integer division allows; batch-major cells.
std::vector<Cell> Batch(const Bins& bins, std::span<const size_t> steady, size_t k) {
  const size_t n_batches = std::max<size_t>(k, 1);
  std::vector<Cell> batches(n_batches * bins.n_streams);
  for (size_t i = 0; i < steady.size(); ++i) {
    const size_t j = i * n_batches / steady.size();
    for (size_t s = 0; s < bins.n_streams; ++s) batches[j * bins.n_streams + s].Add(bins.at(steady[i], s));
  }
  return batches;
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
  const std::vector<Cell> batches = Batch(bins, steady, k);
  const RatioStats all = Ratio(batches, n_streams, 0, batches.size() / n_streams);
  r.samples_per_s = all.estimate;
  r.n_batches = static_cast<int>(k);
  if (k >= 2 && r.samples_per_s > 0) {
    const double half = StudentT975(static_cast<int>(k) - 1) * std::sqrt(all.variance);
    r.ci_low = r.samples_per_s - half;
    r.ci_high = r.samples_per_s + half;
    r.rel_half_width = half / r.samples_per_s;
  }

  // Drift: a significant difference between the first and second half of the steady batches.
  if (k >= 4 && r.samples_per_s > 0) {
    const size_t h = k / 2;
    const RatioStats early = Ratio(batches, n_streams, 0, h);
    const RatioStats late = Ratio(batches, n_streams, h, k);
    const double diff = late.estimate - early.estimate;
    const double se = std::sqrt(early.variance + late.variance);
    const int dof = static_cast<int>(std::min(h, k - h)) - 1;
    r.drift_rel = diff / r.samples_per_s;
    r.drift = std::abs(diff) > StudentT975(dof) * se && std::abs(r.drift_rel) >= options_.drift_min_rel;
  }

  r.converged = r.n_batches >= options_.min_batches && r.steady_s >= options_.min_steady_s &&
                r.rel_half_width <= options_.target_rel_half_width && !r.warmup_at_limit && !r.drift;
  return r;
}

}  // namespace sat::measure
