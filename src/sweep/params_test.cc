#include "sweep/params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace sat::sweep {
namespace {

using nlohmann::json;

TEST(Distribution, NamesRoundTrip) {
  for (const auto& name : DistributionNames()) {
    auto d = DistributionFromName(name);
    ASSERT_TRUE(d) << name;
    if (name != "categorical_w_probabilities") {
      EXPECT_EQ(DistributionName(*d), name);
    }
  }
  EXPECT_EQ(DistributionFromName("categorical_w_probabilities"), Distribution::kCategorical);
  EXPECT_FALSE(DistributionFromName("beta"));
}

TEST(Rng, IsStandardMt19937_64) {
  // The C++ standard fixes the 10000th output of a default-seeded mt19937_64.
  Rng rng(5489);
  uint64_t v = 0;
  for (int i = 0; i < 10000; ++i) v = rng.Next();
  EXPECT_EQ(v, 9981545732273789042ULL);
}

TEST(Rng, DrawsStayInRangeAndCoverIt) {
  Rng rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const double u = rng.Uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const int64_t k = rng.UniformInt(-3, 3);
    ASSERT_GE(k, -3);
    ASSERT_LE(k, 3);
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 7u);
  const int64_t any = rng.UniformInt(INT64_MIN, INT64_MAX);  // the full range must not loop forever
  (void)any;
  EXPECT_EQ(rng.UniformInt(5, 5), 5);
}

TEST(Rng, SameSeedSameDrawsAndPinnedValues) {
  Rng a(42), b(42), c(43);
  std::vector<double> da, db, dc;
  for (int i = 0; i < 5; ++i) {
    da.push_back(a.StandardNormal());
    db.push_back(b.StandardNormal());
    dc.push_back(c.StandardNormal());
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
  // Pinned: a change here means every random sweep plan changes with it.
  Rng pinned(1);
  EXPECT_EQ(pinned.Next(), 2469588189546311528ULL);
  EXPECT_DOUBLE_EQ(Rng(1).Uniform01(), static_cast<double>(2469588189546311528ULL >> 11) * 0x1.0p-53);
}

TEST(StreamSeed, DiffersPerIndexAndSeed) {
  std::set<uint64_t> seeds;
  for (uint64_t s = 0; s < 4; ++s) {
    for (uint64_t i = 0; i < 100; ++i) seeds.insert(StreamSeed(s, i));
  }
  EXPECT_EQ(seeds.size(), 400u);
  EXPECT_EQ(StreamSeed(3, 9), StreamSeed(3, 9));
}

Parameter Range(Distribution d, double min, double max) {
  Parameter p;
  p.name = "x";
  p.distribution = d;
  p.min = min;
  p.max = max;
  return p;
}

// Draws `n` values of `p` with a fixed seed.
std::vector<json> Draw(const Parameter& p, int n = 3000) {
  Rng rng(99);
  std::vector<json> out;
  for (int i = 0; i < n; ++i) out.push_back(Sample(p, rng));
  return out;
}

TEST(Sample, IntUniformCoversBothEndsAndGivesIntegers) {
  std::set<int64_t> seen;
  for (const json& v : Draw(Range(Distribution::kIntUniform, 2, 6))) {
    ASSERT_TRUE(v.is_number_integer());
    seen.insert(v.get<int64_t>());
  }
  EXPECT_EQ(seen, (std::set<int64_t>{2, 3, 4, 5, 6}));
}

TEST(Sample, UniformStaysWithinBounds) {
  double lo = 1, hi = 0;
  for (const json& v : Draw(Range(Distribution::kUniform, 0.25, 0.5))) {
    ASSERT_TRUE(v.is_number_float());
    lo = std::min(lo, v.get<double>());
    hi = std::max(hi, v.get<double>());
  }
  EXPECT_GE(lo, 0.25);
  EXPECT_LT(hi, 0.5);
  EXPECT_LT(lo, 0.26);  // spread over the whole range
  EXPECT_GT(hi, 0.49);
}

TEST(Sample, QUniformRoundsToMultiplesOfQ) {
  Parameter p = Range(Distribution::kQUniform, 0.0, 1.0);
  p.q = 0.25;
  std::set<double> seen;
  for (const json& v : Draw(p)) {
    ASSERT_TRUE(v.is_number_float());
    seen.insert(v.get<double>());
  }
  EXPECT_EQ(seen, (std::set<double>{0.0, 0.25, 0.5, 0.75, 1.0}));

  p = Range(Distribution::kQUniform, 0, 100);
  p.q = 10;
  p.q_is_integer = true;
  for (const json& v : Draw(p, 500)) {
    ASSERT_TRUE(v.is_number_integer());
    EXPECT_EQ(v.get<int64_t>() % 10, 0);
    EXPECT_GE(v.get<int64_t>(), 0);
    EXPECT_LE(v.get<int64_t>(), 100);
  }
}

TEST(Sample, QRoundingIsHalfToEvenLikeNumPy) {
  Parameter p = Range(Distribution::kQNormal, 0, 0);
  p.sigma = 0;  // every draw is exactly mu
  p.q = 1;
  for (const auto& [mu, expected] :
       std::vector<std::pair<double, double>>{{0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, -0.0}}) {
    p.mu = mu;
    Rng rng(1);
    EXPECT_EQ(Sample(p, rng).get<double>(), expected) << mu;
  }
}

TEST(Sample, LogUniformValuesIsPositiveAndSpreadsOverDecades) {
  std::map<int, int> per_decade;
  for (const json& v : Draw(Range(Distribution::kLogUniformValues, 1e-5, 1e-1))) {
    const double x = v.get<double>();
    ASSERT_GE(x, 1e-5 * (1 - 1e-12));
    ASSERT_LE(x, 1e-1 * (1 + 1e-12));
    ++per_decade[static_cast<int>(std::floor(std::log10(x)))];
  }
  // Four decades, about a quarter of the draws each.
  ASSERT_EQ(per_decade.size(), 4u);
  for (const auto& [decade, n] : per_decade) EXPECT_NEAR(n, 750, 150) << decade;
}

TEST(Sample, LogUniformTakesExponents) {
  for (const json& v : Draw(Range(Distribution::kLogUniform, std::log(0.001), std::log(1.0)), 500)) {
    EXPECT_GE(v.get<double>(), 0.001 * (1 - 1e-12));
    EXPECT_LE(v.get<double>(), 1.0 + 1e-12);
  }
  Parameter q = Range(Distribution::kQLogUniformValues, 1, 1000);
  q.q = 1;
  q.q_is_integer = true;
  for (const json& v : Draw(q, 500)) {
    ASSERT_TRUE(v.is_number_integer());
    EXPECT_GE(v.get<int64_t>(), 1);
    EXPECT_LE(v.get<int64_t>(), 1000);
  }
}

TEST(Sample, NormalHasItsMeanAndSpread) {
  Parameter p = Range(Distribution::kNormal, 0, 0);
  p.mu = 3;
  p.sigma = 2;
  double sum = 0, sum2 = 0;
  const auto draws = Draw(p, 5000);
  for (const json& v : draws) {
    sum += v.get<double>();
    sum2 += v.get<double>() * v.get<double>();
  }
  const double mean = sum / draws.size();
  const double sd = std::sqrt(sum2 / draws.size() - mean * mean);
  EXPECT_NEAR(mean, 3, 0.1);
  EXPECT_NEAR(sd, 2, 0.1);

  p.distribution = Distribution::kLogNormal;
  p.mu = 0;
  p.sigma = 0.5;
  for (const json& v : Draw(p, 500)) EXPECT_GT(v.get<double>(), 0);
}

TEST(Sample, CategoricalFollowsProbabilities) {
  Parameter p;
  p.distribution = Distribution::kCategorical;
  p.values = {"a", "b", "c"};
  p.probabilities = {0.7, 0.2, 0.1};
  std::map<std::string, int> counts;
  for (const json& v : Draw(p, 5000)) ++counts[v.get<std::string>()];
  EXPECT_NEAR(counts["a"], 3500, 150);
  EXPECT_NEAR(counts["b"], 1000, 100);
  EXPECT_NEAR(counts["c"], 500, 80);

  p.probabilities.clear();
  counts.clear();
  for (const json& v : Draw(p, 3000)) ++counts[v.get<std::string>()];
  for (const auto& [value, n] : counts) EXPECT_NEAR(n, 1000, 100) << value;
}

TEST(Sample, ConstantIsItsValue) {
  Parameter p;
  p.values = {json::parse("[1, 2]")};
  for (const json& v : Draw(p, 10)) EXPECT_EQ(v, json::parse("[1, 2]"));
}

TEST(GridValues, DiscreteDistributionsAsWandbGrid) {
  auto ints = GridValues(Range(Distribution::kIntUniform, 1, 4), 100);
  ASSERT_TRUE(ints);
  EXPECT_EQ(*ints, (std::vector<json>{1, 2, 3, 4}));

  Parameter q = Range(Distribution::kQUniform, 0, 1);
  q.q = 0.25;
  auto floats = GridValues(q, 100);
  ASSERT_TRUE(floats);
  EXPECT_EQ(*floats, (std::vector<json>{0.0, 0.25, 0.5, 0.75}));  // arange: max excluded
  EXPECT_TRUE((*floats)[0].is_number_float());

  q = Range(Distribution::kQUniform, 0, 10);
  q.q = 5;
  q.q_is_integer = q.bounds_are_integers = true;
  auto whole = GridValues(q, 100);
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, (std::vector<json>{0, 5}));
  EXPECT_TRUE((*whole)[1].is_number_integer());
}

TEST(GridValues, RefusesContinuousProbabilitiesAndHugeRanges) {
  auto continuous = GridValues(Range(Distribution::kUniform, 0, 1), 100);
  ASSERT_FALSE(continuous);
  EXPECT_NE(continuous.error().message.find("'uniform' is continuous"), std::string::npos);
  EXPECT_EQ(continuous.error().exit_code, kExitUsage);

  Parameter p;
  p.distribution = Distribution::kCategorical;
  p.values = {1, 2};
  p.probabilities = {0.5, 0.5};
  EXPECT_FALSE(GridValues(p, 100));

  auto huge = GridValues(Range(Distribution::kIntUniform, 0, 1e9), 100000);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("1000000001 grid values"), std::string::npos) << huge.error().message;
}

}  // namespace
}  // namespace sat::sweep
