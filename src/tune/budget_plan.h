// How the guided search shares its budget among its steps, so that every knob of the guides gets measured before
// any step spends trials refining: what a person tuning by hand with five minutes does (one try of each knob
// first, then more where it pays). Pure functions.
//
// The budget left is counted in trials of the length trials have taken so far (TrialsHeld). Each step ahead needs
// its first trials (the workers step one loader-mode run, the amp step one compute run per other choice, the batch
// step one doubling, full training one run per pinned-memory and preload value); those are reserved first, in the
// steps' order. What is left is shared among the steps that can refine (more worker counts, more batch sizes,
// runs again of estimates that did not settle) by weight. A step may run a trial beyond its first ones only while
// its share holds one; the share is worked out again before every such trial from the budget then left, so trials
// shorter than expected leave more to share and longer ones less.
#pragma once

#include <string>
#include <vector>

namespace sat::tune {

// What one step ahead needs: its first trials (never fewer than 0) and its weight in the refinements (0: none).
struct StepNeed {
  std::string step;  // "workers", "amp", "batch", "full", "confirm"
  int first = 0;
  double weight = 0;
};

// What one step gets: its first trials, and how many more it may run.
struct StepShare {
  std::string step;
  int first = 0;
  int more = 0;
};

// Whole trials of `trial_s` seconds in `left_s` seconds; 0 when either is not positive.
int TrialsHeld(double left_s, double trial_s);

// Shares `trials` among `needs`, in their order: the first trials of each step while they last (a step later in
// the order may get fewer than it needs), then what is left by weight (largest remainders first, ties to the
// earlier step). The shares add up to at most `trials`.
std::vector<StepShare> ShareTrials(int trials, const std::vector<StepNeed>& needs);

// "about 14 trials of ~17s: workers 1-3, amp 1, batch 1-5, full training 3, confirm 1" (a range where a step
// may refine), for the tune's plan line.
std::string PlanText(int trials, double trial_s, const std::vector<StepShare>& shares);

}  // namespace sat::tune
