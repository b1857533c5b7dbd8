#include "tune/objective.h"

#include <utility>

namespace sat::tune {

namespace {

// Each objective and its name on the command line and in results.json.
constexpr std::pair<Objective, std::string_view> kNames[] = {
    {Objective::kThroughput, "throughput"}, {Objective::kEnergy, "energy"}, {Objective::kCost, "cost"}};

}  // namespace

std::string_view ObjectiveName(Objective o) {
  for (const auto& [objective, name] : kNames) {
    if (objective == o) return name;
  }
  return "throughput";
}

std::optional<Objective> ParseObjective(std::string_view name) {
  for (const auto& [objective, known] : kNames) {
    if (known == name) return objective;
  }
  return std::nullopt;
}

void ApplyObjective(Trial& t, Objective objective) {
  t.score.reset();
  if (objective != Objective::kEnergy || t.request.mode == core::StageKind::kLoader) return;
  TrialScore s;
  s.unit = "samples/J";
  if (!t.joules_per_sample || *t.joules_per_sample <= 0 || t.samples_per_s <= 0) {
    s.missing = "has no energy reading";
  } else {
    s.value = 1 / *t.joules_per_sample;
    const double per_sample = s.value / t.samples_per_s;
    s.low = t.ci_low * per_sample;
    s.high = t.ci_high * per_sample;
  }
  t.score = std::move(s);
}

ObjectiveWords WordsFor(Objective o) {
  if (o == Objective::kEnergy)
    return {"frugal", "reaches", "the most frugal", "more frugal", "costlier in energy", "energy saving", "cuts the energy per sample of full training"};
  return {"fast", "trains at", "the fastest", "faster", "slower", "speed-up", "speeds full training up"};
}

double GainShare(Objective o, double a, double b) { return o == Objective::kEnergy ? 1 - b / a : a / b - 1; }

}  // namespace sat::tune
