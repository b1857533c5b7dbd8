// When one measurement may be said to be faster than another: the rule behind every comparison, adoption and
// speed-up claim that tune makes. Pure functions.
//
// A trial's estimate counts (Reliable) when the trial succeeded and its estimate converged (its 95% interval and
// trend bound met the target over the estimator's floor: 10 batches, or for slow steps 4 batches of 2 steps
// spanning 12 s), or settled with at least kMinSteadySteps training steps after the warm-up:
// warm-up cut before its limit, no drift, enough batches for a Student t interval. So trial length follows the
// measured spread: steps that agree count after a few, noisy ones only once their interval is tight. A settled interval may be wider than
// --target (that width only lets a trial stop early); a wide interval simply separates from fewer others.
// Two trials are ordered only when both count and their 95% intervals do not overlap; otherwise they are "not
// distinguishable", and no sentence may say that one is faster, nor by how much.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tune/trial.h"

namespace sat::tune {

// Training steps after the warm-up a trial needs before its estimate counts: 4 batches of 2 steps, the fewest a
// trend line can be fitted through (measure/estimator.h).
inline constexpr int kMinSteadySteps = 2 * measure::kMinTrendBatches;

// What comparisons judge a trial by: its score when it has one (--objective energy: samples per joule, objective.h),
// else its throughput and interval. Every function below compares scores; with no score set, that is throughput.
TrialScore ScoreOf(const Trial& t);

// The trial's estimate counts for comparisons (see above); with a score, the score must have an interval too.
bool Reliable(const Trial& t);
// Why a succeeded trial's estimate does not count, as a predicate for "trial 7 ...": "is too slow to measure in
// this budget (12 steady steps of the 30 needed)", "has too few steady steps (...)", "did not settle (still
// drifting)"; empty when it counts or the trial failed.
std::string UnreliableWhy(const Trial& t);

enum class Order { kFaster, kSlower, kNotDistinguishable };

// How `a` compares with `b`: faster or slower only when both are Reliable and their intervals are apart.
Order Compare(const Trial& a, const Trial& b);
// `a` is distinguishably faster than `b`, and by at least `gain` (a share) on the point estimates.
bool FasterBy(const Trial& a, const Trial& b, double gain);

// `a`'s throughput over `b`'s, only when the two are distinguishable (either way); nullopt otherwise.
std::optional<double> RatioIfDistinguishable(const Trial& a, const Trial& b);

// "1,234 samples/s ±2%", or the score: "41.2 samples/J ±3%" (the interval left out when there is none).
std::string RateWithInterval(const Trial& t);
// Why two trials cannot be told apart, for a sentence: NotDistinguishable(a, b, "from amp=off") is "not
// distinguishable from amp=off (1,234 samples/s ±8% against 1,200 samples/s ±6%: the 95% intervals overlap)", or
// "...: trial 7 is too slow to measure in this budget (...)" when one of them does not count.
std::string NotDistinguishable(const Trial& a, const Trial& b, const std::string& from = "");

// A measured point of a scan (a batch size, a worker count) and its trial.
struct TrialPoint {
  int64_t x = 0;
  const Trial* trial = nullptr;
};

// The x of the highest point estimate among the Reliable points; nullopt when none counts.
std::optional<int64_t> FastestReliable(const std::vector<TrialPoint>& points);
// The smallest x among the Reliable points whose point estimate is within `tolerance` (a share) of the
// fastest's; nullopt when none counts. A preference among near-equals, not a speed claim.
std::optional<int64_t> SmallestWithinReliable(const std::vector<TrialPoint>& points, double tolerance);

}  // namespace sat::tune
