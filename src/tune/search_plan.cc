// The guided search's budget plan (budget_plan.h): what each step needs first, and whether the running step may
// run one more trial.
#include <fmt/core.h>

#include <algorithm>

#include "tune/compare.h"
#include "tune/levels.h"
#include "tune/search_internal.h"
#include "util/strings.h"

namespace sat::tune::internal {

namespace {

// Steps that can refine (more worker counts, more batch sizes) share what is left after every step's first
// trials by these weights; the batch search has the most to refine (doubling, bisection, smaller sizes). Amp and
// full training refine only by running again an estimate that did not settle.
double Weight(const std::string& step) {
  if (step == "workers") return 1;
  if (step == "batch") return 2;
  if (step == "amp" || step == "full") return 0.5;
  return 0;
}

}  // namespace

int Search::FirstTrials(const std::string& step) const {
  if (step == "confirm") return 1;
  if (step == "workers") return Exposed(KnobRole::kWorkers) ? 1 : 0;
  if (step == "batch") return Exposed(KnobRole::kBatchSize) ? 1 : 0;
  if (step == "amp") {
    const KnobSpec* amp = Exposed(KnobRole::kAmp);
    if (!amp) return 0;
    // The script's own choice in compute mode is the compute ceiling, measured before this step (with the helper).
    const int own = out_.helper ? 1 : 0;
    return std::max(0, static_cast<int>(amp->choices.size()) - own);
  }
  if (step == "full") {
    // The tuned settings, the workers against the script's own count, the compute-fastest batch against the
    // recommended smaller one, and one run per other value of each knob that only full training measures.
    int n = 1 + (Exposed(KnobRole::kWorkers) ? 1 : 0) + (Exposed(KnobRole::kBatchSize) ? 1 : 0);
    for (const auto& k : out_.knobs) {
      const KnobRole r = k.spec.role;
      if (k.exposed && (r == KnobRole::kPinMemory || r == KnobRole::kPreload || r == KnobRole::kOther))
        n += std::max(0, static_cast<int>(GridLevels(k.spec).size()) - 1);
    }
    return n;
  }
  return 0;
}

std::vector<StepNeed> Search::NeedsFrom(const std::string& step) const {
  std::vector<StepNeed> needs;
  auto used = used_.find(step);
  needs.push_back({step, std::max(0, FirstTrials(step) - (used == used_.end() ? 0 : used->second)), Weight(step)});
  for (const auto& s : order_)
    if (s != step && !done_.count(s)) needs.push_back({s, FirstTrials(s), Weight(s)});
  return needs;
}

double Search::TrialLength() const {
  double sum = 0;
  int n = 0;
  for (const auto& t : trials_)
    if (!t.cached && !t.interrupted && t.wall_s > 0) {
      sum += t.wall_s;
      ++n;
    }
  return n > 0 ? sum / n : o_.trial_s;
}

bool Search::Affordable() {
  if (!o_.budget_left_s || running_.empty() || running_ == "confirm") return true;
  const std::vector<StepNeed> needs = NeedsFrom(running_);
  if (needs.front().first > 0) return true;
  // A refinement: the step's share of what the budget holds beyond the first trials of the steps after it,
  // counting the refinements it already ran, must hold one more.
  const int refined = std::max(0, used_[running_] - FirstTrials(running_)) + again_used_[running_];
  const int held = TrialsHeld(o_.budget_left_s(), TrialLength());
  if (refined < ShareTrials(held + refined, needs).front().more) return true;
  cut_.insert(running_);
  return false;
}

bool Search::AgainAffordable() const {
  if (!o_.budget_left_s || running_.empty() || running_ == "confirm") return true;
  // Besides the run again: the first trials of this step and of the steps after it, and the confirmation.
  int first = 1;
  for (const StepNeed& need : NeedsFrom(running_)) first += need.first;
  return TrialsHeld(o_.budget_left_s(), TrialLength()) >= first + 1;
}

void Search::Plan() {
  if (!o_.budget_left_s || out_.failed || out_.stopped || o_.strategy != Strategy::kGuided) return;
  std::vector<StepNeed> needs;
  if (out_.helper) needs.push_back({"ceilings", 2, 0});
  for (const auto& s : order_) needs.push_back({s, FirstTrials(s), Weight(s)});
  const double left = o_.budget_left_s(), length = TrialLength();
  const int held = TrialsHeld(left, length);
  out_.plan = fmt::format("{} left: {}", FormatDuration(left), PlanText(held, length, ShareTrials(held, needs)));
  Decide("plan", fmt::format("Plan for the {}; every step's first trials are kept for it, and a step refines only "
                             "within its share of the rest.",
                             out_.plan));
  if (o_.on_plan) o_.on_plan(out_.plan);
}

}  // namespace sat::tune::internal
