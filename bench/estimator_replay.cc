// Replays a probe stage's estimator.csv (measure/observation_log.h) through the stop loop's convergence checks and
// prints, as one JSON object, where the stage would have stopped early at the given target and at what estimate,
// beside the estimate over the whole log. Used by bench/estimator_accuracy.sh: the early stop checked against a
// long run on that run's own data.
//
// Run: estimator_replay STAGE/estimator.csv [--target 0.02]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/observation_log.h"
#include "util/strings.h"

namespace {

nlohmann::json Describe(const sat::measure::SteadyState& s) {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"samples_per_s", s.samples_per_s}, {"ci_low", finite(s.ci_low)},       {"ci_high", finite(s.ci_high)},
          {"rel_half_width", finite(s.rel_half_width)}, {"converged", s.converged}, {"drift", s.drift},
          {"n_batches", s.n_batches}, {"steady_s", s.steady_s}};
}

int Usage(const char* why) {
  std::fprintf(stderr, "estimator_replay: %s\nusage: estimator_replay STAGE/estimator.csv [--target 0.02]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) return Usage("expects a log and, optionally, --target FRACTION");
  sat::measure::EstimatorOptions options;
  if (argc == 4) {
    const std::optional<double> target = sat::ParseDouble(argv[3]);
    if (std::strcmp(argv[2], "--target") != 0 || !target || !(*target > 0)) {
      return Usage("--target takes a fraction above 0, such as 0.02");
    }
    options.target_rel_half_width = *target;
  }
  auto log = sat::measure::ReadObservationLog(argv[1]);
  if (!log) {
    std::fprintf(stderr, "estimator_replay: %s\n", log.error().message.c_str());
    return 1;
  }
  sat::measure::SteadyStateEstimator whole;
  for (const auto& f : *log) whole.Add(f.observation);
  const sat::measure::EarlyStop early = sat::measure::ReplayEarlyStop(*log, options, 0);
  nlohmann::json out = {{"observations", log->size()},
                        {"fed_s", log->empty() ? 0.0 : log->back().fed_s},
                        {"whole", Describe(whole.Estimate())},
                        {"early", Describe(early.estimate)},
                        {"early_stopped", early.stopped},
                        {"early_at_s", early.at_s},
                        {"early_observations", early.observations}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
