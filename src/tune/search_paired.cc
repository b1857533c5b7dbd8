// Decisions on readings taken back to back: where the machine's speed moves between trials (docs/benchmarks.md, tune
// run 7: the same command at 751, 878 and 1,942 samples/s within minutes), a challenger compared with an incumbent
// read minutes earlier, or even just before, follows the machine rather than the settings (search_internal.h,
// Search::BackToBack).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "tune/compare.h"
#include "tune/search_internal.h"

namespace sat::tune::internal {

TrialRequest Search::AgainRequest(const Trial& t) const {
  TrialRequest again = t.request;
  again.repeat = kFirstAgainRepeat;
  for (const auto& other : trials_)
    if (other.request.mode == again.mode && other.request.knobs == again.knobs)
      again.repeat = std::max(again.repeat, other.request.repeat + 1);
  return again;
}

const Trial* Search::ReadAgain(const Trial& t) {
  if (!AgainAffordable()) return nullptr;
  TrialRequest again = AgainRequest(t);
  if (!running_.empty()) again.step = running_;
  const Trial* later = Run(again);
  if (!later || !Succeeded(*later) || !Reliable(*later)) return nullptr;
  // Later requests of the same settings get the latest reading (Measure).
  for (auto& [first, latest] : again_)
    if (latest == t.id) latest = later->id;
  if (!again_.count(t.id) && t.request.repeat < kFirstAgainRepeat) again_[t.id] = later->id;
  return later;
}

bool Search::Moved(const Trial& earlier, const Trial& later) {
  return Reliable(earlier) && Reliable(later) && Compare(later, earlier) != Order::kNotDistinguishable &&
         ScoreOf(earlier).value > 0 && std::abs(ScoreOf(later).value / ScoreOf(earlier).value - 1) > kMoved;
}

Search::Pair Search::BackToBack(const Trial* incumbent, const Trial* challenger,
                                const std::function<int(const Trial& challenger, const Trial& incumbent)>& verdict) {
  Pair p{incumbent, challenger};
  if (!o_.back_to_back || !incumbent || !challenger || incumbent == challenger || !Reliable(*incumbent) ||
      !Reliable(*challenger))
    return p;
  // A machine that read the same settings alike twice, and never apart, is taken as steady.
  if (!drifting_ && steady_ >= kSteadyChecks) return p;
  const int first = verdict(*challenger, *incumbent);
  // The incumbent again, right after the challenger.
  const Trial* again = ReadAgain(*incumbent);
  if (!again) return p;
  p.ids.push_back(again->id);
  p.incumbent = again;
  const bool moved = Moved(*incumbent, *again);
  if (moved) drifting_ = true;
  else ++steady_;
  // A move as large as the confirmation's check looks for (kMachineDrift) is said to the user too.
  WarnMachineMoved(MachineMoved(*incumbent, *again, "when measured again right after another setting"));
  const int second = verdict(*challenger, *again);
  if (first == second) {
    if (moved)
      p.note = fmt::format("the machine's speed moved (the settings it was compared with read {} before and {} right "
                           "after), and the verdict is the same against both readings",
                           RateWithInterval(*incumbent), RateWithInterval(*again));
    return p;
  }
  if (!moved) {
    // The same machine, a challenger on the line between two verdicts: nothing to choose between them.
    p.undecided = true;
    p.note = fmt::format("measured again right after, the other reading ({}) gives another verdict than the first "
                         "({}): too close to call",
                         RateWithInterval(*again), RateWithInterval(*incumbent));
    return p;
  }
  // The machine moved between the incumbent's two readings, and the two verdicts disagree: one pair straddles the move.
  // The challenger again, right after the incumbent's second reading, gives a pair on one side of it.
  const Trial* challenger_again = ReadAgain(*challenger);
  if (!challenger_again) {
    p.undecided = true;
    p.note = fmt::format("the machine's speed moved between readings ({} then {}) and the budget held no run to "
                         "measure both again back to back",
                         RateWithInterval(*incumbent), RateWithInterval(*again));
    return p;
  }
  p.ids.push_back(challenger_again->id);
  p.challenger = challenger_again;
  p.note = fmt::format("the machine's speed moved between readings ({} then {}), so the verdict rests on the two "
                       "measured again back to back (trials {} and {})",
                       RateWithInterval(*incumbent), RateWithInterval(*again), again->id, challenger_again->id);
  return p;
}

Search::Pair Search::BackToBack(const Trial* incumbent, const Trial* challenger, double gain) {
  return BackToBack(incumbent, challenger, [gain](const Trial& c, const Trial& i) {
    return FasterBy(c, i, gain) ? 1 : Compare(c, i) == Order::kSlower ? -1 : 0;
  });
}

}  // namespace sat::tune::internal
