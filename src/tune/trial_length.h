// How long trials run: a trial needs kMinSteadySteps steady training steps (compare.h) within its cap. One
// that stops at its cap with fewer shows the pace of its steps, and the tune either makes trials longer (fewer,
// longer trials, while the budget left holds several of them) or marks the trial too slow to measure in this
// budget. Pure functions; the tune's trial loop (tune.cc) applies them.
#pragma once

#include <string>

#include "tune/trial.h"

namespace sat::tune {

// A trial made longer runs only while the budget left holds this many trials of the new length, so the search
// can still compare something.
inline constexpr double kLongTrialsLeft = 3;

// The trial ran to its cap `cap_s` (stopped by saturate after that long, not converged, not interrupted) with
// throughput, helper reports or torch loaded, but with fewer than kMinSteadySteps steady steps. A script that loaded
// torch and reported nothing was still starting: on a GPU, CUDA's start and the first step (cuDNN's algorithm
// search, torch.compile, the FLOP count) can outlast a short cap.
bool TooShort(const Trial& t, double cap_s);

// The length a too-short trial shows it needs, in seconds: its start-up and warm-up again, then
// kMinSteadySteps at the pace of its steady steps (else of its observations), with half again as margin; at
// least 1.5 x `cap` (the limit it ran under). Twice `cap` when it saw too little to tell a pace.
double NeededLength(const Trial& t, double cap);

struct LengthPlan {
  bool again = false;  // run the trial once more, and every later trial, under `cap_s`
  double cap_s = 0;    // the length the trial needs (NeededLength)
  std::string note;    // one sentence for the report: trials made longer, or this one too slow to measure
};

// What to do after a TooShort trial that ran under `cap_s`, with `left_s` of the budget left: again under the
// needed length when this was its first run (`first`), the cap is not fixed by --trial-budget (`cap_fixed`) and
// the budget left holds kLongTrialsLeft such trials; else it is too slow to measure in this budget.
LengthPlan PlanLength(const Trial& t, double cap_s, double left_s, bool first, bool cap_fixed);

}  // namespace sat::tune
