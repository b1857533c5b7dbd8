#include "sweep/bayes.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sat::sweep {
namespace {

Parameter Uniform(std::string name, double lo, double hi) {
  Parameter p;
  p.name = std::move(name);
  p.distribution = Distribution::kUniform;
  p.min = lo;
  p.max = hi;
  return p;
}

// A bowl with its minimum 0 at x = 0.3, y = 0.7, and a log-scaled parameter whose best value is 1e-3.
double Bowl(const nlohmann::json& v) {
  const double x = v["x"].get<double>(), y = v["y"].get<double>();
  const double lr = std::log10(v["lr"].get<double>()) + 3;
  return (x - 0.3) * (x - 0.3) + (y - 0.7) * (y - 0.7) + 0.05 * lr * lr;
}

std::vector<Parameter> BowlParams() {
  Parameter lr;
  lr.name = "lr";
  lr.distribution = Distribution::kLogUniformValues;
  lr.min = 1e-5;
  lr.max = 1e-1;
  return {lr, Uniform("x", 0, 1), Uniform("y", 0, 1)};
}

TEST(GaussianProcessTest, InterpolatesWhatItWasGivenAndIsUnsureFarAway) {
  Eigen::MatrixXd x(4, 1);
  x << 0.0, 0.3, 0.6, 1.0;
  Eigen::VectorXd y(4);
  for (int i = 0; i < 4; ++i) y(i) = std::sin(6 * x(i, 0));
  const GaussianProcess gp(x, y);
  for (int i = 0; i < 4; ++i) {
    const auto p = gp.Predict(x.row(i).transpose());
    EXPECT_NEAR(p.mean, y(i), 0.05);
    EXPECT_LT(p.sd, 0.1);
  }
  Eigen::VectorXd between(1);
  between << 0.45;
  EXPECT_GT(gp.Predict(between).sd, gp.Predict(x.row(1).transpose()).sd);
}

TEST(ExpectedImprovementTest, GrowsWithMeanBelowBestAndWithUncertainty) {
  EXPECT_DOUBLE_EQ(ExpectedImprovement(1, 0, 2), 1);
  EXPECT_DOUBLE_EQ(ExpectedImprovement(3, 0, 2), 0);
  EXPECT_GT(ExpectedImprovement(2, 1, 2), ExpectedImprovement(2, 0.5, 2));
  EXPECT_GT(ExpectedImprovement(1.5, 0.5, 2), ExpectedImprovement(2.5, 0.5, 2));
  EXPECT_NEAR(ExpectedImprovement(2, 1, 2), 1 / std::sqrt(2 * M_PI), 1e-12);
}

TEST(EncodeParamsTest, EachDistributionToTheUnitInterval) {
  const auto params = BowlParams();
  const Eigen::VectorXd e = EncodeParams(params, {{"lr", 1e-3}, {"x", 0.25}, {"y", 1.0}});
  ASSERT_EQ(e.size(), 3);
  EXPECT_NEAR(e(0), 0.5, 1e-12);  // 1e-3 is halfway between 1e-5 and 1e-1 on the log scale
  EXPECT_NEAR(e(1), 0.25, 1e-12);
  EXPECT_NEAR(e(2), 1.0, 1e-12);
  Parameter c;
  c.name = "opt";
  c.distribution = Distribution::kCategorical;
  c.values = {"adam", "sgd", "lamb"};
  Parameter k;
  k.name = "k";
  k.values = {1};
  EXPECT_NEAR(EncodeParams({c, k}, {{"opt", "lamb"}, {"k", 1}})(0), 1.0, 1e-12);
  EXPECT_EQ(EncodeParams({c, k}, {{"opt", "lamb"}, {"k", 1}}).size(), 1);
}

// Sequential search of `runs` runs; returns the best value found.
double BestOfBayes(uint64_t seed, int runs) {
  const auto params = BowlParams();
  std::vector<BayesObservation> seen;
  double best = 1e9;
  for (int i = 0; i < runs; ++i) {
    nlohmann::json v = ProposeBayes(params, seen, {}, false, seed, i);
    const double f = Bowl(v);
    best = std::min(best, f);
    seen.push_back({v, f});
  }
  return best;
}

double BestOfRandom(uint64_t seed, int runs) {
  double best = 1e9;
  for (const RunParams& r : RandomRuns(BowlParams(), runs, seed)) best = std::min(best, Bowl(r.values));
  return best;
}

TEST(ProposeBayesTest, FindsABetterPointThanRandomSearchOnAverage) {
  constexpr int kSeeds = 8, kRuns = 16;
  double bayes = 0, random = 0;
  int bayes_wins = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const double b = BestOfBayes(seed, kRuns), r = BestOfRandom(seed + 1000, kRuns);
    bayes += b / kSeeds;
    random += r / kSeeds;
    bayes_wins += b < r;
  }
  EXPECT_LT(bayes, random / 2) << "bayes " << bayes << ", random " << random;
  EXPECT_GE(bayes_wins, kSeeds * 3 / 4);
}

TEST(ProposeBayesTest, MaximisesWhenAsked) {
  const auto params = BowlParams();
  std::vector<BayesObservation> seen;
  for (int i = 0; i < 16; ++i) {
    nlohmann::json v = ProposeBayes(params, seen, {}, true, 3, i);
    seen.push_back({v, -Bowl(v)});
  }
  double best = -1e9;
  for (const auto& o : seen) best = std::max(best, o.metric);
  EXPECT_GT(best, -BestOfRandom(1003, 16));
}

TEST(ProposeBayesTest, PendingRunsPushTheNextProposalAway) {
  const auto params = BowlParams();
  std::vector<BayesObservation> seen;
  for (int i = 0; i < 6; ++i) {
    nlohmann::json v = ProposeBayes(params, seen, {}, false, 5, i);
    seen.push_back({v, Bowl(v)});
  }
  const nlohmann::json first = ProposeBayes(params, seen, {}, false, 5, 6);
  const nlohmann::json second = ProposeBayes(params, seen, {first}, false, 5, 6);
  EXPECT_GT((EncodeParams(params, first) - EncodeParams(params, second)).norm(), 0.02);
  // Without the pending run the same draw comes back: proposals are reproducible.
  EXPECT_EQ(ProposeBayes(params, seen, {}, false, 5, 6), first);
}

TEST(ProposeBayesTest, DrawsAtRandomUntilEnoughRunsFinished) {
  const auto params = BowlParams();
  const auto random = RandomRuns(params, 2, 9);
  EXPECT_EQ(ProposeBayes(params, {}, {}, false, 9, 1), random[1].values);
}

}  // namespace
}  // namespace sat::sweep
