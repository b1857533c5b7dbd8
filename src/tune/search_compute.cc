// Steps 3 and 4 of the guided search, measured in compute mode (the model alone): mixed precision and batch size.
#include <fmt/core.h>

#include <algorithm>

#include "tune/compare.h"
#include "tune/levels.h"
#include "tune/search_internal.h"
#include "util/strings.h"

namespace sat::tune::internal {

namespace {

// Below this batch size per device the guides warn: noisy batch-norm statistics, a poorly used GPU.
constexpr int64_t kSmallBatch = 16;

}  // namespace

// ---- 3. mixed precision ---------------------------------------------------------------------------------------

void Search::Amp() {
  StepScope scope(this, "amp");
  const KnobSpec* k = Exposed(KnobRole::kAmp);
  if (out_.failed || out_.stopped || !k) return;
  const KnobValue now = current_.count(k->name) ? current_.at(k->name) : KnobValue(k->choices.front());
  const Trial* base = Measure(ComputeMode(), current_, "amp");
  if (!base) return;
  const Trial* challenger = nullptr;  // the fastest other choice that ran
  std::vector<int> ids = {base->id};
  std::vector<std::string> failures;
  for (const auto& choice : k->choices) {
    if (KnobValue(choice) == now) continue;
    const Trial* t = Measure(ComputeMode(), With(k->name, choice), "amp");
    if (!t) break;
    ids.push_back(t->id);
    if (!Succeeded(*t)) {
      failures.push_back(fmt::format("{}={} {}", k->name, choice, FailureText(*t)));
      continue;
    }
    if (!challenger || ScoreOf(*t).value > ScoreOf(*challenger).value) challenger = t;
  }
  if (out_.stopped && ids.size() == 1) return;
  // The verdict on readings taken back to back, where the machine's speed moves between trials.
  Pair pair{base, challenger};
  if (challenger && Succeeded(*base)) {
    pair = BackToBack(base, challenger, [&](const Trial& c, const Trial& i) {
      return FasterBy(c, i, o_.gain) ? 1 : Compare(c, i) == Order::kNotDistinguishable ? 0 : -1;
    });
    base = pair.incumbent;
    challenger = pair.challenger;
    ids.insert(ids.end(), pair.ids.begin(), pair.ids.end());
  }
  const Trial* best = !Succeeded(*base) || (challenger && ScoreOf(*challenger).value > ScoreOf(*base).value)
                          ? challenger
                          : base;
  std::string text;
  const std::string other = challenger ? ValueText(challenger->request.knobs.at(k->name)) : "";
  if (pair.undecided) {
    text = fmt::format("Mixed precision cannot be told apart here: {}={} against {}={}: {}; left at {}", k->name, other,
                       k->name, ValueText(now), pair.note, ValueText(now));
    pair.note.clear();
  } else if (best && best != base && (!Succeeded(*base) || FasterBy(*best, *base, o_.gain))) {
    current_[k->name] = best->request.knobs.at(k->name);
    text = Succeeded(*base)
               ? fmt::format("{}={} runs the model at {}, {} {}={} ({}): adopted", k->name, other,
                             RateWithInterval(*best), FormatTimes(ScoreOf(*best).value / ScoreOf(*base).value), k->name,
                             ValueText(now), RateWithInterval(*base))
               : fmt::format("{}={} runs the model at {} where {}={} did not run: adopted", k->name, other,
                             RateWithInterval(*best), k->name, ValueText(now));
  } else if (best && best != base && Compare(*best, *base) == Order::kNotDistinguishable) {
    text = fmt::format("Mixed precision cannot be told apart here: {}={} is {}; left at {}", k->name, other,
                       NotDistinguishable(*best, *base, fmt::format("from {}={}", k->name, ValueText(now))),
                       ValueText(now));
  } else if (best && best != base) {
    text = fmt::format("Mixed precision does not pay here: {}={} gives {} against {} with {}={}; left at {}",
                       k->name, other, RateWithInterval(*best), RateWithInterval(*base), k->name, ValueText(now),
                       ValueText(now));
  } else if (best && failures.size() + 1 == ids.size()) {
    text = fmt::format("{}={} stays ({}): every other choice failed", k->name, ValueText(now), RateWithInterval(*base));
  } else if (best) {
    text = fmt::format("{}={} stays: no other choice ran distinguishably {} ({})", k->name, ValueText(now),
                       WordsFor(o_.objective).better, RateWithInterval(*base));
  } else {
    text = fmt::format("No {} choice ran", k->name);
  }
  for (const auto& f : failures) text += "; " + f;
  if (!pair.note.empty()) text += "; " + pair.note;
  Decide("amp", text + ".", ids);
}

// ---- 4. batch size --------------------------------------------------------------------------------------------

// The host's memory (no GPU), or a GPU's where the batch used under a quarter of the target: two more doublings
// would still fit, so the boundary is far and finding it is not what the budget is for.
bool Search::MemoryNotTheLimit(const Trial& t) const {
  if (!o_.gpu) return true;
  const std::optional<double> share = MemoryShare(t);
  return share && *share * 4 < o_.mem_target;
}

void Search::Batch() {
  StepScope scope(this, "batch");
  const KnobSpec* k = Exposed(KnobRole::kBatchSize);
  if (out_.failed || out_.stopped || !k) return;
  const std::string& name = k->name;
  const KnobSpec* alloc = Exposed(KnobRole::kAllocator);
  std::map<int64_t, const Trial*> points;
  std::vector<int> ids;
  auto measure = [&](int64_t b) {
    const Trial* t = Measure(ComputeMode(), With(name, b), "batch");
    if (t) {
      points[b] = t;
      ids.push_back(t->id);
    }
    return t;
  };
  auto why_not = [&](const Trial& t, int64_t b) {
    if (Succeeded(t) && OverMemoryTarget(t, o_.mem_target))
      return fmt::format("{} would use {} of the {} memory at peak, above the {} target", b,
                         FormatShare(*MemoryShare(t)), t.mem_is_gpu ? "GPU's" : "host's", FormatShare(o_.mem_target));
    return fmt::format("{} {}", b, FailureText(t));
  };

  const int64_t start = std::clamp(
      current_.count(name) ? current_.at(name).get<int64_t>() : k->Start().get<int64_t>(), k->lo, k->hi);
  std::optional<int64_t> ok, bad;
  std::string boundary;  // why the search stopped growing
  bool memory_bound = false;
  std::string short_of_memory;  // why the climb ended before memory did: the largest that fits is not reached

  // Shrink until a size fits.
  for (int64_t b = start;;) {
    const Trial* t = measure(b);
    if (!t) return;
    if (Fits(*t)) {
      ok = b;
      break;
    }
    bad = b;
    boundary = why_not(*t, b);
    memory_bound = OutOfMemory(*t) || Succeeded(*t);
    if (!memory_bound || b == k->lo) {
      Decide("batch", fmt::format("No batch size could be used: {}.", boundary), ids);
      return;
    }
    b = std::max(k->lo, b / 2);
  }
  // Grow by doubling until out of memory, over the target, a failure, or the end of the range; where memory is not
  // the limit, also until two doublings in a row are distinguishably slower than the best so far (the climb has
  // stopped paying, and the memory boundary is not worth the budget).
  const Trial* best = points.at(*ok);
  std::vector<const Trial*> slower;
  bool halved = false;
  while (!bad && *ok < k->hi) {
    int64_t next = std::min(k->hi, *ok * 2);
    const Trial* t = measure(next);
    if (!t) {
      short_of_memory = out_.stopped ? fmt::format("the budget ran out after batch {}", *ok)
                                     : fmt::format("the plan's share for the batch size was spent at batch {}", *ok);
      break;
    }
    if (Fits(*t)) {
      ok = next;
      if (MemoryNotTheLimit(*t) && Compare(*t, *best) == Order::kSlower) slower.push_back(t);
      else slower.clear();
      const bool improved = Reliable(*t) && (!Reliable(*best) || ScoreOf(*t).value > ScoreOf(*best).value);
      if (improved) best = t;
      // Where memory is not the limit and a doubling did not improve on the best, smaller batches are as likely
      // to pay as larger ones: the half of the smallest size measured goes before the next doubling.
      if (!improved && !halved && MemoryNotTheLimit(*t) && points.begin()->first / 2 >= k->lo) {
        halved = true;
        const Trial* h = measure(points.begin()->first / 2);
        if (h && Fits(*h) && Reliable(*h) && (!Reliable(*best) || ScoreOf(*h).value > ScoreOf(*best).value)) best = h;
      }
      if (slower.size() == 2) {
        short_of_memory = fmt::format(
            "batch {} and {} ran distinguishably {} than batch {} ({} and {} against {}), and {} memory is not the "
            "limit (peak {} of it), so the climb stops there",
            slower[0]->request.knobs.at(name).get<int64_t>(), next, WordsFor(o_.objective).worse,
            best->request.knobs.at(name).get<int64_t>(), RateWithInterval(*slower[0]), RateWithInterval(*t),
            RateWithInterval(*best), t->mem_is_gpu ? "the GPU's" : "the host's",
            MemoryShare(*t) ? FormatShare(*MemoryShare(*t)) : std::string("unknown"));
        break;
      }
      continue;
    }
    // Out of memory may be fragmentation: the allocator's expandable segments get one chance.
    if (OutOfMemory(*t) && alloc && ValueText(current_.at(alloc->name)) != "on") {
      KnobValues with_alloc = With(name, next);
      with_alloc[alloc->name] = "on";
      const Trial* retry = Measure(ComputeMode(), with_alloc, "batch");
      if (!retry) break;
      ids.push_back(retry->id);
      if (Fits(*retry)) {
        current_[alloc->name] = "on";
        points[next] = retry;
        ok = next;
        Decide("batch", fmt::format("Batch {} ran out of memory, and fits with {}={}: adopted.", next, kAllocatorVar,
                                    kAllocatorOn),
               {t->id, retry->id});
        continue;
      }
    }
    bad = next;
    boundary = why_not(*t, next);
    memory_bound = OutOfMemory(*t) || Succeeded(*t);
  }
  // Bisect a memory boundary; a plain failure is not bisected (its cause is not the size).
  while (ok && bad && memory_bound) {
    auto mid = BisectMidpoint(*ok, *bad, o_.batch_multiple);
    if (!mid) break;
    const Trial* t = measure(*mid);
    if (!t) break;
    if (Fits(*t)) {
      ok = *mid;
    } else {
      bad = *mid;
      boundary = why_not(*t, *mid);
    }
  }
  if (!ok) return;

  auto fitting = [&] {
    std::vector<TrialPoint> pts;
    for (const auto& [b, t] : points)
      if (b <= *ok && Fits(*t)) pts.push_back({b, t});
    return pts;
  };
  std::string limit =
      !bad && !short_of_memory.empty()
          ? fmt::format("The largest batch that fits was not reached: {}", short_of_memory)
      : !bad         ? fmt::format("Batch {} is the end of the range ({}) and fits", *ok, k->RangeText())
      : memory_bound ? fmt::format("Batch {} is the largest that fits: {}", *ok, boundary)
                     : fmt::format("Batch {} is the largest that ran: {}, not for lack of memory, so the search "
                                   "stops there",
                                   *ok, boundary);
  if (!bad && !short_of_memory.empty()) out_.largest_batch_tried = *ok;
  else largest_batch_ = *ok;
  std::optional<int64_t> recommended = SmallestWithinReliable(fitting(), o_.tolerance);
  if (!recommended) {
    // No throughput counts: the size stays where it was, if it fits.
    if (start > *ok) current_[name] = *ok;
    std::string reasons;
    for (const auto& p : fitting())
      reasons += fmt::format("{}batch {} {}", reasons.empty() ? "" : "; ", p.x, UnreliableWhy(*p.trial));
    Decide("batch", fmt::format("{}; no batch size's throughput counts ({}), so {} stays {}.", limit, reasons, name,
                                ValueText(current_.at(name))),
           ids);
    return;
  }
  // Smaller batches than any measured may be as fast: halve while they stay within the tolerance.
  while (*recommended == fitting().front().x && *recommended / 2 >= k->lo && !out_.stopped) {
    const Trial* t = measure(*recommended / 2);
    if (!t || !Fits(*t)) break;
    std::optional<int64_t> again = SmallestWithinReliable(fitting(), o_.tolerance);
    if (again == recommended) break;
    recommended = again;
  }
  const int64_t fastest = *FastestReliable(fitting());
  fastest_batch_ = fastest;
  const Trial* fast = points.at(fastest);
  const Trial* rec = points.at(*recommended);
  const ObjectiveWords words = WordsFor(o_.objective);
  const std::string fastest_is = Compare(*fast, *rec) == Order::kNotDistinguishable && fast != rec
                                     ? words.best + " by its estimate is"
                                     : words.best + " is";
  std::string pick;
  if (*recommended == fastest && fitting().front().x == fastest) {
    pick = fmt::format("{}, {} ({}), is recommended; no smaller batch was measured{}", words.best, fastest,
                       RateWithInterval(*fast),
                       fastest / 2 < k->lo ? ""
                       : out_.stopped      ? " (the budget ran out)"
                                           : " (the plan's share for the batch size was spent)");
  } else if (*recommended == fastest) {
    pick = fmt::format("{}, {} ({}), is recommended: every smaller batch is more than {} {} by its estimate",
                       words.best, fastest, RateWithInterval(*fast), FormatShare(o_.tolerance), words.worse);
  } else {
    pick = fmt::format("{} {} ({}); {} is within {} of it ({}) and is recommended: smaller batches generalise "
                       "better",
                       fastest_is, fastest, RateWithInterval(*fast), *recommended, FormatShare(o_.tolerance),
                       RateWithInterval(*rec));
  }
  // A larger batch than the script's own needs evidence: distinguishably better than it.
  const Trial* own = points.count(start) && Fits(*points.at(start)) ? points.at(start) : nullptr;
  if (own && *recommended > start && Compare(*rec, *own) != Order::kFaster) {
    pick = fmt::format("{} {} ({}), but {} is {}, so {} stays {}", fastest_is, fastest, RateWithInterval(*fast),
                       *recommended, NotDistinguishable(*rec, *own, fmt::format("from the script's own {}", start)),
                       name, start);
    recommended = start;
    rec = own;
  }
  current_[name] = *recommended;
  out_.recommended_batch_trial = rec->id;
  out_.fastest_batch_trial = fast->id;
  for (const auto& [b, t] : points) out_.batch_curve.push_back(t->id);

  std::string unmeasured;
  for (const auto& p : fitting())
    if (!Reliable(*p.trial))
      unmeasured += fmt::format("; batch {} does not count: it {}", p.x, UnreliableWhy(*p.trial));
  Decide("batch", limit + "; " + pick + unmeasured + ".", ids);
  if (*recommended < kSmallBatch)
    out_.warnings.push_back(fmt::format("batch {} per device is below {}: batch-norm statistics get noisy and {} "
                                        "is poorly used",
                                        *recommended, kSmallBatch, o_.gpu ? "the GPU" : "the hardware"));

  // A larger batch or mixed precision lifts the compute ceiling: the loader must still keep up.
  const KnobSpec* workers = Exposed(KnobRole::kWorkers);
  const Trial* ceiling = Pipe(Find(out_.compute_ceiling_trial));
  const Trial* raised = Pipe(rec);
  if (workers && workers_chosen_ && out_.helper && ceiling && Compare(*raised, *ceiling) == Order::kFaster)
    ChooseWorkers(*workers, raised, true);
}

}  // namespace sat::tune::internal
