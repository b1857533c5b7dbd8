// Sweep parameters: W&B's distributions, how a value is drawn, and which runs a search space gives. Values are
// typed as W&B's Python types them (sweep/py_values.h); the command a run's values fill is
// sweep/command_template.h.
//
// Draws are reproducible: Rng is std::mt19937_64 (its output sequence is fixed by the C++ standard) with our own
// uniform, integer and normal transforms (std:: distributions differ between standard libraries). Pure
// functions and plain data; Rng is not thread-safe (one per thread).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sweep/py_values.h"
#include "util/result.h"

namespace sat::sweep {

// W&B's distributions that saturate draws from. `log_uniform` takes min/max as natural-log exponents;
// `log_uniform_values` takes the values themselves. q_* round to a multiple of q (half to even, as NumPy), and
// give integers when q is written as an integer.
enum class Distribution {
  kConstant,           // value
  kCategorical,        // values [, probabilities]
  kIntUniform,         // min, max: integers, both ends included
  kUniform,            // min, max
  kQUniform,           // min, max, q
  kLogUniform,         // min, max (exponents)
  kLogUniformValues,   // min > 0, max
  kQLogUniform,        // min, max (exponents), q
  kQLogUniformValues,  // min > 0, max, q
  kNormal,             // mu, sigma
  kQNormal,            // mu, sigma, q
  kLogNormal,          // mu, sigma
  kQLogNormal,         // mu, sigma, q
};

// W&B's name ("int_uniform"), and back; `categorical_w_probabilities` reads as categorical.
std::string_view DistributionName(Distribution d);
std::optional<Distribution> DistributionFromName(std::string_view name);
// Every accepted name, for "did you mean".
std::vector<std::string> DistributionNames();

// One parameter of the search space, validated by the spec parser (min < max, sigma >= 0, q > 0, ...).
struct Parameter {
  std::string name;  // nested parameters are flattened: "optimizer.lr"
  Distribution distribution = Distribution::kConstant;
  std::vector<nlohmann::json> values;  // constant: one; categorical: the choices, without duplicates
  std::vector<double> probabilities;   // categorical: one per value, summing to 1; empty: equal chances
  double min = 0, max = 0;             // int_uniform: integral values
  bool bounds_are_integers = false;    // min and max were both written as integers
  double q = 1;
  bool q_is_integer = false;  // q was written as an integer, so quantized draws are integers
  double mu = 0, sigma = 1;
};

// A seeded generator whose draws are the same on every platform for the same seed (up to libm's last-bit
// differences in log/exp/cos for the log and normal families).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  uint64_t Next() { return engine_(); }
  double Uniform01();                          // [0, 1), 53 random bits
  int64_t UniformInt(int64_t lo, int64_t hi);  // [lo, hi], unbiased
  double StandardNormal();                     // Box-Muller, one draw per call

 private:
  std::mt19937_64 engine_;
};

// A seed for the `index`-th draw of a sweep seeded with `seed`: each run has its own stream, so a run's values
// do not depend on how many runs come before or after it.
uint64_t StreamSeed(uint64_t seed, uint64_t index);

// One draw of `p`.
nlohmann::json Sample(const Parameter& p, Rng& rng);

// The values a grid search visits, in order, as W&B's grid search does: constant and categorical values as
// written; int_uniform every integer from min to max; q_uniform min, min + q, ... while below max (NumPy's
// arange: max itself is not included). Error (exit code 2) for continuous distributions, for categorical
// values with probabilities, and for a range of more than `limit` values.
Result<std::vector<nlohmann::json>> GridValues(const Parameter& p, size_t limit);

// The most runs one sweep may plan (grid size or run count); larger grids need run_cap.
inline constexpr int64_t kMaxRuns = 100000;

// The grid's axes: the GridValues of each of `params`, in order (each limited to kMaxRuns values). Usage error
// naming "parameters.NAME" for a parameter a grid cannot visit.
Result<std::vector<std::vector<nlohmann::json>>> GridAxes(const std::vector<Parameter>& params);

// How many runs a grid search over `params` plans: the product of its axes' sizes, or `cap` when smaller. Usage
// error as GridAxes, or when the grid is larger than kMaxRuns and no smaller cap is given.
Result<int64_t> GridRunCount(const std::vector<Parameter>& params, std::optional<int64_t> cap);

// One planned run.
struct RunParams {
  int64_t index = 0;      // 0-based position in the plan
  std::string key;        // 12 hex digits, stable across processes: a hash of the values (and, for random
                          // search, the index, so two equal draws stay two runs)
  nlohmann::json values;  // object: parameter name -> value
};

// The first `count` runs of the grid whose axes are the GridValues of `params` (same order): the Cartesian
// product with the last axis turning fastest (itertools.product order, as W&B's grid search).
std::vector<RunParams> GridRuns(const std::vector<Parameter>& params,
                                const std::vector<std::vector<nlohmann::json>>& axes, int64_t count);

// `count` random runs: run i draws every parameter, in order, from Rng(StreamSeed(seed, i)), so a seed gives
// the same runs everywhere and a larger count keeps the earlier runs.
std::vector<RunParams> RandomRuns(const std::vector<Parameter>& params, int64_t count, uint64_t seed);

}  // namespace sat::sweep
