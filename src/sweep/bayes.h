// `method: bayes`: W&B's Bayesian search. A Gaussian process models the sweep metric over the parameters, fitted
// to the runs finished so far; each new run gets the candidate with the largest expected improvement over the
// best value yet. Runs still in flight enter the model as if they had reported the mean of the finished runs'
// values (the "constant liar"), so that several runs proposed at once spread out instead of all going to the
// same point.
//
// Parameters are encoded to [0, 1] by their distribution (ranges linearly, log ranges on the log scale, normal
// ones through their CDF, categorical values by index); constants are left out. Candidates are draws from the
// parameters' own distributions, so every proposal is a value W&B's random search could give.
//
// Linear algebra is Eigen's (Cholesky factorisation). Pure functions and plain data; not thread-safe.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "sweep/params.h"

namespace sat::sweep {

// A Gaussian process with a Matérn 5/2 kernel (one length scale for all inputs) on standardised targets. The
// length scale and noise are chosen by the largest log marginal likelihood over a fixed grid.
class GaussianProcess {
 public:
  // `x`: one row per observation, inputs in [0, 1]; `y`: one value per row. At least one row.
  GaussianProcess(Eigen::MatrixXd x, const Eigen::VectorXd& y);

  struct Prediction {
    double mean = 0;
    double sd = 0;  // of the latent function, in y's units
  };
  Prediction Predict(const Eigen::VectorXd& at) const;

  double length_scale() const { return length_; }

 private:
  Eigen::MatrixXd x_;
  Eigen::LLT<Eigen::MatrixXd> chol_;
  Eigen::VectorXd alpha_;
  double y_mean_ = 0, y_scale_ = 1, length_ = 0.3, noise_ = 1e-6;
};

// Expected improvement below `best` (minimisation) of a prediction with `mean` and `sd`.
double ExpectedImprovement(double mean, double sd, double best);

// The [0, 1] coordinates of `values` (an object: name -> value) over the non-constant parameters, in order.
Eigen::VectorXd EncodeParams(const std::vector<Parameter>& params, const nlohmann::json& values);

struct BayesObservation {
  nlohmann::json values;  // object: parameter name -> value
  double metric = 0;
};

// Random draws before the model is trusted: the first runs of a bayes sweep are drawn as random search does.
inline constexpr size_t kBayesInitialRuns = 3;
inline constexpr int kBayesCandidates = 1000;

// The values of the next run: a random draw (Rng(StreamSeed(seed, index))) while fewer than kBayesInitialRuns
// runs have finished, else the best of kBayesCandidates draws by expected improvement, with `pending` (the values
// of runs in flight) as constant liars. `maximize`: the metric's goal.
nlohmann::json ProposeBayes(const std::vector<Parameter>& params, const std::vector<BayesObservation>& finished,
                            const std::vector<nlohmann::json>& pending, bool maximize, uint64_t seed, int64_t index);

}  // namespace sat::sweep
