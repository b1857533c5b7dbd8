#include "sweep/bayes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sat::sweep {
namespace {

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double NormalPdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }

double Matern52(double r, double length) {
  const double s = std::sqrt(5.0) * r / length;
  return (1 + s + s * s / 3) * std::exp(-s);
}

Eigen::MatrixXd Kernel(const Eigen::MatrixXd& x, double length, double noise) {
  const Eigen::Index n = x.rows();
  Eigen::MatrixXd k(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j <= i; ++j) k(i, j) = k(j, i) = Matern52((x.row(i) - x.row(j)).norm(), length);
    k(i, i) += noise;
  }
  return k;
}

double Clamp01(double v) { return std::isfinite(v) ? std::clamp(v, 0.0, 1.0) : 0.5; }

double Ratio(double v, double lo, double hi) { return hi > lo ? (v - lo) / (hi - lo) : 0.5; }

bool Varies(const Parameter& p) {
  return p.distribution != Distribution::kConstant &&
         !(p.distribution == Distribution::kCategorical && p.values.size() < 2);
}

double Encode(const Parameter& p, const nlohmann::json& v) {
  if (p.distribution == Distribution::kCategorical) {
    const auto it = std::find(p.values.begin(), p.values.end(), v);
    if (it == p.values.end()) return 0.5;
    return static_cast<double>(it - p.values.begin()) / static_cast<double>(p.values.size() - 1);
  }
  if (!v.is_number()) return 0.5;
  const double x = v.get<double>();
  const double log_x = x > 0 ? std::log(x) : -std::numeric_limits<double>::infinity();
  switch (p.distribution) {
    case Distribution::kIntUniform:
    case Distribution::kUniform:
    case Distribution::kQUniform: return Ratio(x, p.min, p.max);
    case Distribution::kLogUniform:
    case Distribution::kQLogUniform: return Ratio(log_x, p.min, p.max);
    case Distribution::kLogUniformValues:
    case Distribution::kQLogUniformValues: return Ratio(log_x, std::log(p.min), std::log(p.max));
    case Distribution::kNormal:
    case Distribution::kQNormal: return p.sigma > 0 ? NormalCdf((x - p.mu) / p.sigma) : 0.5;
    case Distribution::kLogNormal:
    case Distribution::kQLogNormal: return p.sigma > 0 ? NormalCdf((log_x - p.mu) / p.sigma) : 0.5;
    default: return 0.5;
  }
}

nlohmann::json Draw(const std::vector<Parameter>& params, Rng& rng) {
  nlohmann::json values = nlohmann::json::object();
  for (const Parameter& p : params) values[p.name] = Sample(p, rng);
  return values;
}

}  // namespace

GaussianProcess::GaussianProcess(Eigen::MatrixXd x, const Eigen::VectorXd& y) : x_(std::move(x)) {
  // Standardised targets, so that one grid of noise levels and a unit signal variance fit any metric's scale.
  y_mean_ = y.mean();
  const double var = y.size() > 1 ? (y.array() - y_mean_).square().sum() / static_cast<double>(y.size() - 1) : 0;
  y_scale_ = var > 0 ? std::sqrt(var) : 1;
  const Eigen::VectorXd z = (y.array() - y_mean_) / y_scale_;

  // Hyperparameters by the log marginal likelihood: -z'K^-1 z / 2 - log|K| / 2.
  double best = -std::numeric_limits<double>::infinity();
  for (double length : {0.05, 0.1, 0.2, 0.35, 0.6, 1.0}) {
    for (double noise : {1e-6, 1e-4, 1e-2, 1e-1}) {
      Eigen::LLT<Eigen::MatrixXd> chol(Kernel(x_, length, noise));
      if (chol.info() != Eigen::Success) continue;
      const Eigen::VectorXd alpha = chol.solve(z);
      const double log_det = 2 * chol.matrixL().toDenseMatrix().diagonal().array().log().sum();
      const double lml = -0.5 * z.dot(alpha) - 0.5 * log_det;
      if (lml > best) {
        best = lml;
        length_ = length;
        noise_ = noise;
        chol_ = chol;
        alpha_ = alpha;
      }
    }
  }
  if (!std::isfinite(best)) {
    // Only a degenerate input (rows repeated exactly with no noise) gets here; heavy noise always factorises.
    noise_ = 1;
    chol_.compute(Kernel(x_, length_, noise_));
    alpha_ = chol_.solve(z);
  }
}

GaussianProcess::Prediction GaussianProcess::Predict(const Eigen::VectorXd& at) const {
  Eigen::VectorXd k(x_.rows());
  for (Eigen::Index i = 0; i < x_.rows(); ++i) k(i) = Matern52((x_.row(i).transpose() - at).norm(), length_);
  const double mean = k.dot(alpha_);
  const Eigen::VectorXd v = chol_.matrixL().solve(k);
  const double var = std::max(0.0, 1.0 - v.squaredNorm());
  return Prediction{y_mean_ + y_scale_ * mean, y_scale_ * std::sqrt(var)};
}

double ExpectedImprovement(double mean, double sd, double best) {
  if (sd <= 0) return std::max(0.0, best - mean);
  const double z = (best - mean) / sd;
  return (best - mean) * NormalCdf(z) + sd * NormalPdf(z);
}

Eigen::VectorXd EncodeParams(const std::vector<Parameter>& params, const nlohmann::json& values) {
  std::vector<double> coords;
  for (const Parameter& p : params) {
    if (!Varies(p)) continue;
    const auto it = values.is_object() ? values.find(p.name) : values.end();
    coords.push_back(it == values.end() ? 0.5 : Clamp01(Encode(p, *it)));
  }
  return Eigen::Map<Eigen::VectorXd>(coords.data(), static_cast<Eigen::Index>(coords.size()));
}

nlohmann::json ProposeBayes(const std::vector<Parameter>& params, const std::vector<BayesObservation>& finished,
                            const std::vector<nlohmann::json>& pending, bool maximize, uint64_t seed, int64_t index) {
  Rng rng(StreamSeed(seed, static_cast<uint64_t>(index)));
  const bool any_varies = std::any_of(params.begin(), params.end(), Varies);
  if (finished.size() < kBayesInitialRuns || !any_varies) return Draw(params, rng);

  // The model's data: finished runs as they are, runs in flight at the mean of the finished values.
  const size_t n = finished.size() + pending.size();
  const Eigen::Index dims = EncodeParams(params, finished.front().values).size();
  Eigen::MatrixXd x(static_cast<Eigen::Index>(n), dims);
  Eigen::VectorXd y(static_cast<Eigen::Index>(n));
  double sum = 0, best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < finished.size(); ++i) {
    const double v = maximize ? -finished[i].metric : finished[i].metric;
    x.row(static_cast<Eigen::Index>(i)) = EncodeParams(params, finished[i].values);
    y(static_cast<Eigen::Index>(i)) = v;
    sum += v;
    best = std::min(best, v);
  }
  const double liar = sum / static_cast<double>(finished.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    const auto row = static_cast<Eigen::Index>(finished.size() + i);
    x.row(row) = EncodeParams(params, pending[i]);
    y(row) = liar;
  }
  const GaussianProcess gp(std::move(x), y);

  // The candidate with the largest expected improvement; the first draw wins ties, so the choice is reproducible.
  nlohmann::json chosen;
  double chosen_ei = -1;
  for (int c = 0; c < kBayesCandidates; ++c) {
    nlohmann::json candidate = Draw(params, rng);
    const auto p = gp.Predict(EncodeParams(params, candidate));
    const double ei = ExpectedImprovement(p.mean, p.sd, best);
    if (ei > chosen_ei) {
      chosen_ei = ei;
      chosen = std::move(candidate);
    }
  }
  return chosen;
}

}  // namespace sat::sweep
