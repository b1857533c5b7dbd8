// What `saturate tune --objective` optimises, and the words its sentences use.
//
//   throughput  the most samples per second (the default)
//   energy      the fewest joules per sample: samples per joule over each trial's steady part, of the probed GPU
//               (NVML's energy counter, else power x time), or without a GPU of the CPU packages (RAPL), as
//               core/energy.h reads them. Full-training and compute trials are
//               judged by it; loader-only trials keep their throughput, which is a capacity the workers step
//               matches to the compute ceiling, not a cost. Its interval is the throughput's, scaled by the same
//               factor: the power's own spread over the window is not in it.
//   cost        the least money per sample at --price-per-hour. The price is per GPU-hour and tune never changes
//               the GPU count, so cost per sample orders exactly as throughput: the search is the throughput
//               search, and the report gives its cost per million samples.
//
// Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tune/trial.h"

namespace sat::tune {

enum class Objective { kThroughput, kEnergy, kCost };

std::string_view ObjectiveName(Objective o);  // "throughput", "energy", "cost"
std::optional<Objective> ParseObjective(std::string_view name);

// Sets (or clears) `t.score` for `objective` (see above). A full or compute trial without an energy reading
// under the energy objective gets a score of 0 that says why, so no decision rests on it.
void ApplyObjective(Trial& t, Objective objective);

// The words a sentence about two trials uses under an objective.
struct ObjectiveWords {
  std::string adjective;  // "fast", "frugal"
  std::string reaches;    // "trains at", "reaches" (a figure follows)
  std::string best;       // "the fastest", "the most frugal"
  std::string better;     // "faster", "more frugal"
  std::string worse;      // "slower", "costlier in energy"
  std::string gain;       // "speed-up", "energy saving"
  std::string improves;   // "speeds full training up", "cuts full training's energy per sample"
};
ObjectiveWords WordsFor(Objective o);
// How much better score `a` is than `b`, as the share a sentence gives: throughput a/b - 1 ("10% faster"), energy
// 1 - b/a (the share of joules per sample saved).
double GainShare(Objective o, double a, double b);

}  // namespace sat::tune
