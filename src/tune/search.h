// The search: which trials to run, in which order, and what to conclude from them.
//
// Guided (the default), following the performance guides, each step building on the last:
//   1. baseline: full training on the script's own settings; which knobs the script exposes; the script's own
//      flags for knobs it would inject, proven by one run (flag_map.h); then the ceilings: the loader alone and
//      the model alone (compute), when the script uses the helper. The ceilings set the order of steps 2-4:
//      loading in line (no workers, and full training far below the smaller ceiling: the loader and the model
//      take turns, whichever is faster alone) puts the workers first; otherwise a loader distinguishably faster
//      than the model runs steps 3 and 4 before step 2, and the workers are chosen against the ceiling they set;
//   2. workers: loader throughput against worker count in loader-only mode (0, 1, 2, 4, ... then bisection),
//      and the fewest workers whose loader throughput clears the compute ceiling with `loader_margin`;
//   3. amp: each mixed-precision choice in compute mode; one is adopted when it wins by `gain`;
//   4. batch: compute mode, doubling until out of memory (or over `mem_target` of the memory at peak, or the end
//      of the range), then bisecting the boundary down to `batch_multiple`. Where memory is not the limit (no
//      GPU, or a GPU far below it), two doublings in a row distinguishably slower than the best so far end the
//      climb: the largest batch that fits is then not reached, and said so. The fastest fitting size, the largest
//      fitting size, and the recommended one (the smallest within `tolerance` of the fastest: smaller batches
//      generalise better; larger than the script's own only when distinguishably faster than it) are kept. With
//      a GPU, a batch that ran out of memory is retried once with the allocator knob. Workers are then re-checked
//      against the new compute ceiling;
//   5. full: the workers checked against the script's own count, then pinned memory, preload and any other knob
//      in full training, adopted when they win by `gain`; then every batch size compute mode could not rank (within
//      10% of the compute-fastest; three at most) in full training, while the plan holds them: the script's own
//      size (else the chosen one) stays unless another beats it there by more than `tolerance` beyond both
//      intervals, and then the smallest within `tolerance` of the fastest there is recommended;
//   6. confirm: one more full run of the recommendation. Where it reads distinguishably slower than the baseline,
//      or the machine's speed is seen to move (the confirmation and an earlier reading of the same settings apart by
//      more than 20%), the baseline runs again right after it while the budget holds a run, and the verdict and the
//      speed-up rest on those two readings, taken back to back. One still distinguishably slower than the baseline
//      is not the end: the best other configuration measured in full training is confirmed in its place when the
//      budget holds a run, and only when that fails too do the script's own settings stay.
// With a budget (SearchOptions::budget_left_s), the steps share it by plan (budget_plan.h): each step's first
// trials are reserved, so every knob is measured before any step refines, and refinements take a share each.
// Without the helper (no loader or compute mode), every trial is full training. Grid: the baseline, then every
// combination of the exposed knobs' GridLevels in full training (the exhaustive reference for benchmarks).
//
// Every comparison follows compare.h: "wins by `gain`" means distinguishably faster (both estimates reliable,
// their 95% intervals apart) and by at least `gain` on the point estimates; measurements that cannot be told
// apart are said to be "not distinguishable", and the script's own value (or the fewer workers, the smaller
// batch) stays. The same holds for the confirmation's speed-up over the baseline; a confirmation distinguishably
// slower than the baseline brings the recommendation back to the script's own settings.
//
// A machine's speed can move between trials (shared hosts; tune run 7 of docs/benchmarks.md read one command at 751,
// 878 and 1,942 samples/s within minutes), and a challenger compared with an incumbent read earlier then follows the
// machine. So, while the budget holds runs again (`back_to_back`), the decisions of steps 3 and 5 (mixed precision;
// the workers, the full-training knobs, and the user's batch size against the fastest in full training) measure the
// incumbent again right after the challenger; the verdict stands where both readings give it; where the machine
// moved between them, the challenger is measured again too and the last two readings decide; where they disagree
// on a steady machine, the two are not distinguishable. Two readings again that agree, and none apart, show the
// machine steady, and later decisions rest on one reading each.
//
// Knobs the script has no flag for, but that the automatic instrumentation reports ("auto": true), are searched
// like helper knobs and become Delivery::kInjected after the baseline.
//
// A failing trial (out of memory, crash) is recorded and steers the search; it never stops it. When the trial
// function returns nothing (budget spent, interrupted), the search stops and concludes from what it has.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tune/knob.h"
#include "tune/objective.h"
#include "tune/trial.h"

namespace sat::tune {

enum class Strategy { kGuided, kGrid };
std::string_view StrategyName(Strategy s);  // "guided", "grid"

struct SearchOptions {
  std::vector<KnobSpec> knobs;  // from ResolveKnobs
  Strategy strategy = Strategy::kGuided;
  bool gpu = false;             // a GPU is present (the allocator knob applies)
  double mem_target = 0.9;      // largest share of the memory a batch may use at peak
  double tolerance = 0.03;      // "within 3% of the best"
  double gain = 0.03;           // a change is adopted when it is this much faster
  double loader_margin = 0.2;   // the loader must clear the compute ceiling by this share
  int64_t batch_multiple = 1;   // bisection stops at this resolution
  // What trials are judged by (objective.h). The trials come scored (ApplyObjective); this picks the words.
  Objective objective = Objective::kThroughput;
  // Asked before each trial of the guided search other than the confirmation: true when what is left of the budget
  // holds only the confirmation run, so the search ends there and confirms what it found (a recommendation nobody
  // confirmed is weaker than one step fewer). Unset: never.
  std::function<bool()> keep_for_confirmation;
  // Seconds of the budget left for trials. Set, the guided search plans (budget_plan.h): every step's first trials
  // are reserved, and a trial beyond them runs only while the step's share of the rest holds one. Unset: no plan,
  // every step runs to its end (the grid, and tests of one step).
  std::function<double()> budget_left_s;
  double trial_s = 0;  // a trial's length before any has run (the trial cap), for the first plan
  // Decisions between two settings rest on readings taken back to back where the machine's speed moves (mixed
  // precision, the workers against the script's own count, the knobs full training measures, and the batch size the
  // user had against the fastest in full training; search_internal.h, Search::BackToBack), while the budget holds
  // the runs again. Off: one reading each, as measured.
  bool back_to_back = true;
  // Called once with the plan's sentence, when the knobs are known (after the baseline), before the next trial.
  std::function<void(const std::string&)> on_plan;
};

struct Decision {
  std::string step;
  std::string text;        // a plain sentence
  std::vector<int> trials;  // the trial ids it rests on
};

struct SearchOutcome {
  std::vector<KnobState> knobs;
  std::vector<Trial> trials;  // in the order asked, ids 1..n
  std::vector<Decision> decisions;
  std::vector<std::string> warnings;
  bool helper = false;        // the script reports through the helper (loader and compute modes work)
  bool failed = false;        // nothing could be tuned: the baseline never ran
  std::string failure;
  bool stopped = false;       // the trial function ran dry (budget, interrupt) before the search ended
  bool kept_for_confirmation = false;  // ... stopped on purpose, with the confirmation still to run

  std::string plan;           // the budget plan as said at the start ("about 14 trials of ~17s: ..."); "" without one
  KnobValues baseline, recommended, fastest, largest_fitting;  // empty: not determined
  // The batch step's climb ended before memory did (two doublings slower on a device whose memory is not the
  // limit, or the plan's share spent): the largest batch that fits was not reached, and this was the largest
  // tried. largest_fitting is then empty.
  std::optional<int64_t> largest_batch_tried;
  std::optional<int> baseline_trial, loader_ceiling_trial, compute_ceiling_trial, confirm_trial;
  std::optional<int> recommended_batch_trial, fastest_batch_trial;  // the batch step's measurements of them
  // The baseline measured again right after the confirmation (step 6), where the first reading was not to be compared
  // with it as it stood; unset: not run.
  std::optional<int> baseline_again_trial;
  std::vector<int> loader_curve;  // loader trials over worker counts, by worker count
  std::vector<int> batch_curve;   // batch-step trials over batch sizes, by batch size
  std::vector<std::string> injected;  // the knobs set by the automatic instrumentation (Delivery::kInjected)
  std::string loader_key, loader_site;  // the training DataLoader, from the first trial that reported one

  const Trial* FindTrial(std::optional<int> id) const;
  // The baseline reading the recommendation's speed-up is claimed against: the one taken back to back with the
  // confirmation where there is one, else the first.
  const Trial* ClaimBase() const { return FindTrial(baseline_again_trial ? baseline_again_trial : baseline_trial); }
};

// Runs one trial with id `id`; nullopt when no trial may run any more (the search then stops). A trial that was
// interrupted comes back with interrupted set, and also stops the search.
using TrialFn = std::function<std::optional<Trial>(int id, const TrialRequest& request)>;

// Runs the search. Requests identical to an earlier one (TrialRequest::SameMeasurement) reuse its trial.
SearchOutcome RunSearch(const SearchOptions& options, const TrialFn& run_trial);

}  // namespace sat::tune
