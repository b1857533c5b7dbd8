#include "sweep/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/json_text.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

struct DistributionEntry {
  Distribution distribution;
  std::string_view name;
};

constexpr DistributionEntry kDistributions[] = {
    {Distribution::kConstant, "constant"},
    {Distribution::kCategorical, "categorical"},
    {Distribution::kIntUniform, "int_uniform"},
    {Distribution::kUniform, "uniform"},
    {Distribution::kQUniform, "q_uniform"},
    {Distribution::kLogUniform, "log_uniform"},
    {Distribution::kLogUniformValues, "log_uniform_values"},
    {Distribution::kQLogUniform, "q_log_uniform"},
    {Distribution::kQLogUniformValues, "q_log_uniform_values"},
    {Distribution::kNormal, "normal"},
    {Distribution::kQNormal, "q_normal"},
    {Distribution::kLogNormal, "log_normal"},
    {Distribution::kQLogNormal, "q_log_normal"},
};

constexpr std::string_view kCategoricalWithProbabilities = "categorical_w_probabilities";

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Rounds to a multiple of q, half to even like NumPy's round; an integer when q was written as one.
nlohmann::json Quantize(double x, const Parameter& p) {
  const double r = std::nearbyint(x / p.q) * p.q;
  if (p.q_is_integer && std::fabs(r) < 9.0e18) return nlohmann::json(static_cast<int64_t>(std::llround(r)));
  return nlohmann::json(r);
}

// A run's key: the hash of its values, and for random search of its index too.
std::string RunKey(const nlohmann::json& values, std::optional<int64_t> index) {
  std::string text = JsonText(values);
  if (index) text += fmt::format("#{}", *index);
  return ShortHash(text, 12);
}

}  // namespace

std::string_view DistributionName(Distribution d) {
  for (const auto& entry : kDistributions) {
    if (entry.distribution == d) return entry.name;
  }
  return "?";
}

std::optional<Distribution> DistributionFromName(std::string_view name) {
  if (name == kCategoricalWithProbabilities) return Distribution::kCategorical;
  for (const auto& entry : kDistributions) {
    if (entry.name == name) return entry.distribution;
  }
  return std::nullopt;
}

std::vector<std::string> DistributionNames() {
  std::vector<std::string> names;
  for (const auto& entry : kDistributions) names.emplace_back(entry.name);
  names.emplace_back(kCategoricalWithProbabilities);
  return names;
}

double Rng::Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == std::numeric_limits<uint64_t>::max()) return static_cast<int64_t>(Next());
  const uint64_t n = span + 1;
  // Rejects the first 2^64 mod n outputs so that every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  while (true) {
    const uint64_t r = Next();
    if (r >= threshold) return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % n);
  }
}

double Rng::StandardNormal() {
  const double u1 = 1.0 - Uniform01();  // (0, 1]: log stays finite
  const double u2 = Uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t StreamSeed(uint64_t seed, uint64_t index) { return SplitMix64(seed ^ SplitMix64(index)); }

nlohmann::json Sample(const Parameter& p, Rng& rng) {
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.Uniform01(); };
  switch (p.distribution) {
    case Distribution::kConstant: return p.values.at(0);
    case Distribution::kCategorical: {
      if (p.probabilities.empty()) {
        return p.values.at(static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(p.values.size()) - 1)));
      }
      const double u = rng.Uniform01();
      double cumulative = 0;
      for (size_t i = 0; i < p.values.size(); ++i) {
        cumulative += p.probabilities[i];
        if (u < cumulative) return p.values[i];
      }
      return p.values.back();  // u above a sum that rounding left just under 1
    }
    case Distribution::kIntUniform: return rng.UniformInt(static_cast<int64_t>(p.min), static_cast<int64_t>(p.max));
    case Distribution::kUniform: return uniform(p.min, p.max);
    case Distribution::kQUniform: return Quantize(uniform(p.min, p.max), p);
    case Distribution::kLogUniform: return std::exp(uniform(p.min, p.max));
    case Distribution::kLogUniformValues: return std::exp(uniform(std::log(p.min), std::log(p.max)));
    case Distribution::kQLogUniform: return Quantize(std::exp(uniform(p.min, p.max)), p);
    case Distribution::kQLogUniformValues: return Quantize(std::exp(uniform(std::log(p.min), std::log(p.max))), p);
    case Distribution::kNormal: return p.mu + p.sigma * rng.StandardNormal();
    case Distribution::kQNormal: return Quantize(p.mu + p.sigma * rng.StandardNormal(), p);
    case Distribution::kLogNormal: return std::exp(p.mu + p.sigma * rng.StandardNormal());
    case Distribution::kQLogNormal: return Quantize(std::exp(p.mu + p.sigma * rng.StandardNormal()), p);
  }
  return nullptr;
}

Result<std::vector<nlohmann::json>> GridValues(const Parameter& p, size_t limit) {
  auto too_many = [&](double count) {
    auto bound = [&](double v) {
      return p.bounds_are_integers ? std::to_string(static_cast<int64_t>(v)) : PyFloatRepr(v);
    };
    return UsageError(
        fmt::format("{} from {} to {} gives {:.0f} grid values, more than the {} runs a sweep may "
                    "plan",
                    DistributionName(p.distribution), bound(p.min), bound(p.max), count, limit));
  };
  switch (p.distribution) {
    case Distribution::kConstant:
    case Distribution::kCategorical:
      if (!p.probabilities.empty()) {
        return UsageError(
            "grid search visits every value once, so 'probabilities' cannot apply; remove them or "
            "use method: random");
      }
      return p.values;
    case Distribution::kIntUniform: {
      if (p.max - p.min + 1 > static_cast<double>(limit)) return too_many(p.max - p.min + 1);
      std::vector<nlohmann::json> values;
      for (auto v = static_cast<int64_t>(p.min); v <= static_cast<int64_t>(p.max); ++v) values.emplace_back(v);
      return values;
    }
    case Distribution::kQUniform: {
      // NumPy's arange(min, max, q): ceil((max - min) / q) values, max itself excluded.
      const double count = std::ceil((p.max - p.min) / p.q);
      if (count > static_cast<double>(limit)) return too_many(count);
      const auto n = static_cast<int64_t>(count);
      const bool integers = p.bounds_are_integers && p.q_is_integer;
      std::vector<nlohmann::json> values;
      for (int64_t i = 0; i < n; ++i) {
        const double v = p.min + static_cast<double>(i) * p.q;
        values.push_back(integers ? nlohmann::json(static_cast<int64_t>(std::llround(v))) : nlohmann::json(v));
      }
      return values;
    }
    default:
      return UsageError(
          fmt::format("grid search needs discrete values, and '{}' is continuous; give 'values', use int_uniform or "
                      "q_uniform, or use method: random",
                      DistributionName(p.distribution)));
  }
}

Result<std::vector<std::vector<nlohmann::json>>> GridAxes(const std::vector<Parameter>& params) {
  std::vector<std::vector<nlohmann::json>> axes;
  for (const auto& p : params) {
    auto values = GridValues(p, static_cast<size_t>(kMaxRuns));
    if (!values) return UsageError(fmt::format("parameters.{}: {}", p.name, values.error().message));
    axes.push_back(std::move(*values));
  }
  return axes;
}

Result<int64_t> GridRunCount(const std::vector<Parameter>& params, std::optional<int64_t> cap) {
  auto axes = GridAxes(params);
  if (!axes) return axes.error();
  double size = 1;
  for (const auto& axis : *axes) size *= static_cast<double>(axis.size());
  if (cap && static_cast<double>(*cap) < size) return *cap;
  if (size > static_cast<double>(kMaxRuns)) {
    return UsageError(
        fmt::format("the grid has {:.0f} runs, more than the {} a sweep may plan; set run_cap to run "
                    "the first ones",
                    size, kMaxRuns));
  }
  return static_cast<int64_t>(size);
}

std::vector<RunParams> GridRuns(const std::vector<Parameter>& params,
                                const std::vector<std::vector<nlohmann::json>>& axes, int64_t count) {
  std::vector<RunParams> runs;
  if (axes.size() != params.size() || std::any_of(axes.begin(), axes.end(), [](auto& a) { return a.empty(); })) {
    return runs;
  }
  // A mixed-radix counter over the axes, the last digit turning fastest.
  std::vector<size_t> digit(axes.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    nlohmann::json values = nlohmann::json::object();
    for (size_t a = 0; a < digit.size(); ++a) values[params[a].name] = axes[a][digit[a]];
    runs.push_back(RunParams{i, RunKey(values, std::nullopt), std::move(values)});
    size_t a = digit.size();
    while (a > 0 && ++digit[a - 1] == axes[a - 1].size()) digit[--a] = 0;
    if (a == 0) break;  // every combination visited
  }
  return runs;
}

std::vector<RunParams> RandomRuns(const std::vector<Parameter>& params, int64_t count, uint64_t seed) {
  std::vector<RunParams> runs;
  for (int64_t i = 0; i < count; ++i) {
    Rng rng(StreamSeed(seed, static_cast<uint64_t>(i)));
    nlohmann::json values = nlohmann::json::object();
    for (const auto& p : params) values[p.name] = Sample(p, rng);
    runs.push_back(RunParams{i, RunKey(values, i), std::move(values)});
  }
  return runs;
}

}  // namespace sat::sweep
