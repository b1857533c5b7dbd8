#include "tune/trial_length.h"

#include <fmt/core.h>

#include <algorithm>

#include "tune/compare.h"

namespace sat::tune {
namespace {

std::string Seconds(double s) { return fmt::format("{:.0f}s", s); }

std::string Steps(int n) { return fmt::format("{} steady step{}", n, n == 1 ? "" : "s"); }

}  // namespace

bool TooShort(const Trial& t, double cap_s) {
  return !t.interrupted && !t.converged && t.exit_class == run::ExitClass::kStopped && t.wall_s >= cap_s &&
         (t.samples_per_s > 0 || t.helper_seen || t.torch_loaded) && t.steady_steps < kMinSteadySteps;
}

double NeededLength(const Trial& t, double cap) {
  const double observed = t.warmup_s + t.steady_s;
  double pace = 0;  // seconds per step
  if (t.steady_steps > 0 && t.steady_s > 0) pace = t.steady_s / t.steady_steps;
  else if (t.observations >= 2 && observed > 0) pace = observed / t.observations;
  else return 2 * cap;
  const double startup = std::max(0.0, t.wall_s - observed);
  return std::max(1.5 * cap, startup + t.warmup_s + 1.5 * kMinSteadySteps * pace);
}

LengthPlan PlanLength(const Trial& t, double cap_s, double left_s, bool first, bool cap_fixed) {
  LengthPlan plan;
  plan.cap_s = NeededLength(t, cap_s);
  plan.again = first && !cap_fixed && plan.cap_s * kLongTrialsLeft <= left_s;
  if (plan.again) {
    plan.note = fmt::format("trial {} saw {} in {}, fewer than the {} an estimate needs: trials now run up to {} "
                            "each (fewer, longer trials)",
                            t.id, Steps(t.steady_steps), Seconds(t.wall_s), kMinSteadySteps,
                            Seconds(plan.cap_s));
  } else {
    plan.note = fmt::format("trial {} is too slow to measure in this budget: {} in {} where {} are needed; about {} "
                            "per trial would be ({})",
                            t.id, Steps(t.steady_steps), Seconds(t.wall_s), kMinSteadySteps,
                            Seconds(plan.cap_s),
                            cap_fixed ? "--trial-budget caps it" : "a larger --budget allows it");
  }
  return plan;
}

}  // namespace sat::tune
