#include "tune/budget_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace sat::tune {

int TrialsHeld(double left_s, double trial_s) {
  if (!(left_s > 0) || !(trial_s > 0) || !std::isfinite(left_s / trial_s)) return 0;
  return static_cast<int>(std::min(std::floor(left_s / trial_s), 1e6));
}

std::vector<StepShare> ShareTrials(int trials, const std::vector<StepNeed>& needs) {
  std::vector<StepShare> out;
  int left = std::max(0, trials);
  for (const auto& n : needs) {
    const int first = std::min(left, std::max(0, n.first));
    left -= first;
    out.push_back({n.step, first, 0});
  }
  double weights = 0;
  for (const auto& n : needs) weights += std::max(0.0, n.weight);
  if (left == 0 || weights <= 0) return out;
  // Whole shares first, then the remainders, largest first (Hamilton's method), so that the shares add up.
  const int extra = left;
  std::vector<std::pair<double, size_t>> remainders;
  for (size_t i = 0; i < needs.size(); ++i) {
    const double exact = extra * std::max(0.0, needs[i].weight) / weights;
    out[i].more = static_cast<int>(std::floor(exact));
    left -= out[i].more;
    if (needs[i].weight > 0) remainders.push_back({exact - std::floor(exact), i});
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; left > 0 && k < remainders.size(); ++k, --left) ++out[remainders[k].second].more;
  return out;
}

std::string PlanText(int trials, double trial_s, const std::vector<StepShare>& shares) {
  std::string steps;
  for (const auto& s : shares) {
    if (s.first + s.more == 0) continue;
    const std::string name = s.step == "full" ? "full training" : s.step;
    steps += fmt::format("{}{} {}", steps.empty() ? "" : ", ", name,
                         s.more > 0 ? fmt::format("{}-{}", s.first, s.first + s.more) : std::to_string(s.first));
  }
  return fmt::format("about {} trial{} of ~{:.0f}s: {}", trials, trials == 1 ? "" : "s", trial_s,
                     steps.empty() ? "none" : steps);
}

}  // namespace sat::tune
