// Step 5 of the guided search: full training. The workers checked against the script's own count, then every
// knob only full training measures (pinned memory, preloading, the script's others), then the batch sizes compute
// mode could not rank (search.h, step 5).
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "tune/compare.h"
#include "tune/levels.h"
#include "tune/search_internal.h"
#include "util/strings.h"

namespace sat::tune::internal {

using core::StageKind;

// ---- 5. full training -----------------------------------------------------------------------------------------

void Search::Full() {
  StepScope scope(this, "full");
  if (out_.failed || out_.stopped) return;
  const Trial* base = Measure(StageKind::kFull, current_, "full");
  if (!base) return;
  if (!Succeeded(*base)) {
    Decide("full", fmt::format("The tuned settings ({}) {} in full training; the recommendation falls back to "
                               "the baseline.",
                               ValuesText(current_, KnobOrder()), FailureText(*base)),
           {base->id});
    current_ = out_.baseline;
    largest_batch_.reset();
    fastest_batch_.reset();
    return;
  }
  const Trial* best = ConfirmWorkers(base);
  if (!best) return;
  for (auto& state : out_.knobs) {
    const KnobSpec& k = state.spec;
    bool full_step = k.role == KnobRole::kPinMemory || k.role == KnobRole::kPreload || k.role == KnobRole::kOther;
    if (!state.exposed || !full_step) continue;
    const KnobValue now = current_.count(k.name) ? current_.at(k.name) : k.Start();
    std::vector<int> ids = {best->id};
    const Trial* winner = nullptr;
    std::vector<std::string> failures;
    for (const KnobValue& v : GridLevels(k)) {
      if (v == now) continue;
      const Trial* t = Measure(StageKind::kFull, With(k.name, v), "full");
      // The plan holds no more, or the search stopped: what was measured still decides (a stop that keeps the last
      // of the budget for the confirmation must not throw it away).
      if (!t) break;
      // Preloading or pinning only takes loading work away: read distinguishably slower from a trial that did not
      // converge, it is more likely a disturbed window than the knob (a README main job kept preload off on
      // 1,111 samples/s ±3%, where another run of the same settings read 1,995 ±1%), so it runs once more where
      // the plan holds it, and the later run stands.
      if ((k.role == KnobRole::kPreload || k.role == KnobRole::kPinMemory) && v == KnobValue("on") &&
          Succeeded(*t) && !t->converged && Compare(*t, *best) == Order::kSlower && AgainAffordable()) {
        const Trial* again = Measure(StageKind::kFull, With(k.name, v), "full", kFirstAgainRepeat);
        if (again) {
          ids.push_back(t->id);
          t = again;
        }
      }
      ids.push_back(t->id);
      if (!Succeeded(*t)) failures.push_back(fmt::format("{}={} {}", k.name, ValueText(v), FailureText(*t)));
      else if (!winner || ScoreOf(*t).value > ScoreOf(*winner).value) winner = t;
    }
    // The verdict on readings taken back to back, where the machine's speed moves between trials.
    Pair pair{best, winner};
    if (winner && Succeeded(*best)) {
      pair = BackToBack(best, winner, o_.gain);
      best = pair.incumbent;
      winner = pair.challenger;
      ids.insert(ids.end(), pair.ids.begin(), pair.ids.end());
    }
    const bool undecided = pair.undecided;
    // "not distinguishable from preload=off (...)" for a sentence, or that the readings back to back could not tell.
    const std::string tie = !winner ? ""
                            : undecided
                                ? "not told apart from " + k.name + "=" + ValueText(now)
                                : NotDistinguishable(*winner, *best, fmt::format("from {}={}", k.name, ValueText(now)));
    std::string text;
    if (winner && !undecided && FasterBy(*winner, *best, o_.gain)) {
      const KnobValue& v = winner->request.knobs.at(k.name);
      text = fmt::format("{}={} {} by {} ({} against {}): adopted", k.name, ValueText(v),
                         WordsFor(o_.objective).improves,
                         FormatShare(GainShare(o_.objective, ScoreOf(*winner).value, ScoreOf(*best).value)),
                         RateWithInterval(*winner), RateWithInterval(*best));
      current_[k.name] = v;
      best = winner;
    } else if (winner && Reliable(*winner) && Reliable(*best) &&
               (undecided || Compare(*winner, *best) == Order::kNotDistinguishable) &&
               (k.role == KnobRole::kPreload || k.role == KnobRole::kPinMemory) &&
               winner->request.knobs.at(k.name) == KnobValue("on")) {
      // Inside the noise, on is right either way: where the two train alike it costs only memory (which the trial
      // had), and where the intervals hide a gain it takes it (docs/benchmarks.md, issue 42's run 3).
      const KnobValue& v = winner->request.knobs.at(k.name);
      text = fmt::format("{}={} is {} in full training; it is adopted, since it costs nothing but memory where the "
                         "two are alike and takes the gain the intervals may hide",
                         k.name, ValueText(v), tie);
      current_[k.name] = v;
      best = winner;
    } else if (winner && (undecided || Compare(*winner, *best) == Order::kNotDistinguishable)) {
      text = fmt::format("{}={} is {} in full training; {} stays {}", k.name,
                         ValueText(winner->request.knobs.at(k.name)), tie, k.name, ValueText(now));
    } else if (winner) {
      text = fmt::format("{}={} brings nothing in full training ({} against {}); {} stays {}", k.name,
                         ValueText(winner->request.knobs.at(k.name)), RateWithInterval(*winner),
                         RateWithInterval(*best), k.name, ValueText(now));
    } else if (ids.size() == 1) {
      continue;
    } else {
      text = fmt::format("{} stays {}", k.name, ValueText(now));
    }
    for (const auto& f : failures) text += "; " + f;
    if (!pair.note.empty()) text += "; " + pair.note;
    Decide("full", text + ".", ids);
  }
  ConfirmBatch(best);
}

namespace {

// The compute-mode trial of batch size `b` (the batch step's record of the recommended size); none where compute
// mode has no reliable reading of it, so that no other size's reading stands in for it.
std::optional<int> CounterpartIn(const std::map<int64_t, const Trial*>& ladder, int64_t b) {
  auto it = ladder.find(b);
  return it != ladder.end() ? std::optional<int>(it->second->id) : std::nullopt;
}

}  // namespace

// The batch was chosen in compute mode, where the model runs alone. In full training a batch's loading costs
// (collation, a worker's hand-over, the step's fixed overheads) are shared by more samples the larger it is, so the
// batch that leads in compute mode can be distinguishably slower in training, which is what the user gets; and
// where compute mode reads the sizes nearly alike (the README's main job: 32 to 256 within a few per cent), which
// of them came out "smallest within the tolerance" was the noise's choice, and the recommendation changed from run
// to run (128, 32, 32, 64 on one evening). So the contested sizes are run in full training, with every other
// setting as tuned: the compute-fastest first, the script's own size, then the sizes whose compute estimate is
// within kContested of the fastest, smallest first, and the next larger where the chosen one is the
// compute-fastest (docs/benchmarks.md, issue 42's runs 1 and 3); at most kMaxContestedRuns, each after the step's
// first trial only while the plan holds it. Like every other knob, the batch stays where the user had it (the
// script's own size where it counts in full training; else the chosen one) unless another size beats it in full training by more than the tolerance beyond both intervals
// (compare.h FasterBy): noise inside the intervals no longer picks the answer. Where one does, the smallest size
// within the tolerance of the fastest there is recommended (smaller batches generalise better). Returns the
// answer's full-training trial.
const Trial* Search::ConfirmBatch(const Trial* current) {
  const KnobSpec* k = Exposed(KnobRole::kBatchSize);
  if (!k || !fastest_batch_ || !current_.count(k->name) || !current_.at(k->name).is_number_integer())
    return current;
  const int64_t chosen = current_.at(k->name).get<int64_t>();
  // The batch sizes measured in compute mode with the other settings as chosen (knobs that compute mode does not
  // exercise, workers, pinning and preloading, may differ), each by its latest reliable trial.
  std::map<int64_t, const Trial*> ladder;
  for (const Trial& t : trials_) {
    if (t.request.mode != StageKind::kCompute || !Reliable(t) || !t.request.knobs.count(k->name)) continue;
    const KnobValue& b = t.request.knobs.at(k->name);
    if (!b.is_number_integer()) continue;
    bool same = true;
    for (const auto& [name, v] : t.request.knobs) {
      const KnobState* state = State(name);
      const KnobRole role = state ? state->spec.role : KnobRole::kOther;
      if (name != k->name && role != KnobRole::kWorkers && role != KnobRole::kPreload &&
          role != KnobRole::kPinMemory && current_.count(name) && current_.at(name) != v)
        same = false;
    }
    if (same) ladder[b.get<int64_t>()] = &t;
  }
  if (!ladder.count(*fastest_batch_)) return current;
  const double fastest_rate = ScoreOf(*ladder.at(*fastest_batch_)).value;
  std::vector<int64_t> contested;
  auto contest = [&](int64_t b) {
    if (b != chosen && std::find(contested.begin(), contested.end(), b) == contested.end() &&
        static_cast<int>(contested.size()) < kMaxContestedRuns)
      contested.push_back(b);
  };
  // The size the user had, where it is not the chosen one: measured in full training whatever compute mode read.
  const int64_t own = out_.baseline.count(k->name) && out_.baseline.at(k->name).is_number_integer()
                          ? out_.baseline.at(k->name).get<int64_t>()
                          : chosen;
  contest(*fastest_batch_);
  contest(own);
  if (chosen == *fastest_batch_)
    if (auto next = ladder.upper_bound(chosen); next != ladder.end()) contest(next->first);
  for (const auto& [b, t] : ladder)
    if (ScoreOf(*t).value >= fastest_rate * (1 - kContested)) contest(b);
  std::map<int64_t, const Trial*> full = {{chosen, current}};
  std::vector<int> ids = {current->id};
  std::vector<std::string> failures;
  for (int64_t b : contested) {
    const Trial* t = Measure(StageKind::kFull, With(k->name, KnobValue(b)), "full");
    // The plan holds no more, or the search stopped (the last of the budget kept for the confirmation, an
    // interruption): decide on what was measured. A README main job once recommended 128 at 1,311 samples/s here
    // while the script's own 64 had just trained at 1,557, because a stop threw the round away.
    if (!t) break;
    ids.push_back(t->id);
    if (Succeeded(*t)) full[b] = t;
    else failures.push_back(fmt::format("{}={} {}", k->name, b, FailureText(*t)));
  }
  if (full.size() == 1 && failures.empty()) return current;
  // The size the user had (where full training measured it; else the one compute mode chose) against the fastest
  // there, on readings taken back to back where the machine's speed moves between trials.
  const int64_t own_or_chosen = full.count(own) && Reliable(*full.at(own)) ? own : chosen;
  Pair pair;
  {
    std::vector<TrialPoint> first;
    for (const auto& [b, t] : full) first.push_back({b, t});
    if (const std::optional<int64_t> fastest = FastestReliable(first); fastest && *fastest != own_or_chosen) {
      pair = BackToBack(full.at(own_or_chosen), full.at(*fastest), o_.tolerance);
      if (pair.incumbent) full[own_or_chosen] = pair.incumbent;
      if (pair.challenger) full[*fastest] = pair.challenger;
      ids.insert(ids.end(), pair.ids.begin(), pair.ids.end());
    }
  }
  // Every full-training rate, smallest size first: "batch_size=32 1,979 samples/s ±3%, 64 2,270 samples/s ±2%".
  std::string rates;
  std::vector<TrialPoint> points;
  for (const auto& [b, t] : full) {
    rates += fmt::format("{}{}{} {}", rates.empty() ? "" : ", ", rates.empty() ? k->name + "=" : "", b,
                         Reliable(*t) ? RateWithInterval(*t) : RateWithInterval(*t) + " (" + UnreliableWhy(*t) + ")");
    points.push_back({b, t});
  }
  for (const auto& f : failures) rates += "; " + f;
  const std::optional<int64_t> fastest_full = FastestReliable(points);
  const std::optional<int64_t> smallest = SmallestWithinReliable(points, o_.tolerance);
  if (!fastest_full || !smallest) {
    Decide("full", fmt::format("In full training {}={} holds: no batch size's rate counts there ({}).", k->name,
                               chosen, rates),
           ids);
    return current;
  }
  const Trial* best = full.at(*fastest_full);
  // The size the user had (where full training measured it; else the one compute mode chose) stays unless full
  // training shows it beaten.
  const int64_t anchor = own_or_chosen;
  const bool held =
      Reliable(*full.at(anchor)) && (pair.undecided || !FasterBy(*best, *full.at(anchor), o_.tolerance));
  const int64_t answer = held ? anchor : *smallest;
  std::string text;
  if (held) {
    text = fmt::format("In full training {}={} {}: no size beats it by more than {} beyond both intervals ({})",
                       k->name, anchor,
                       anchor == chosen ? std::string("holds")
                                        : fmt::format("(the script's own) is kept in place of {}", chosen),
                       FormatShare(o_.tolerance), rates);
  } else {
    text = fmt::format("In full training {}={} is {} ({}){}", k->name, answer,
                       answer == *fastest_full
                           ? WordsFor(o_.objective).best
                           : fmt::format("the smallest within {} of {}, {}", FormatShare(o_.tolerance),
                                         WordsFor(o_.objective).best, *fastest_full),
                       rates,
                       answer > chosen ? ": the loader's work per batch is shared by more samples"
                       : answer < chosen ? ": compute mode's lead for the larger size does not hold in training, "
                                           "and smaller batches generalise better"
                                         : "");
    if (answer != chosen) text += fmt::format("; adopted in place of {}", chosen);
  }
  if (!pair.note.empty()) text += "; " + pair.note;
  if (answer != chosen) {
    current_[k->name] = KnobValue(answer);
    out_.recommended_batch_trial = CounterpartIn(ladder, answer);
  }
  Decide("full", text + ".", ids);
  return full.at(answer);
}

// Workers were chosen from loader-only runs against a compute ceiling measured alone. When the model and the
// loader share the CPU (training on the CPU, or a busy host), that overlap does not happen, so the choice is
// checked against the script's own count in full training; the fewer workers win unless the more are
// distinguishably faster. Returns the faster full-training trial (null once the search stopped).
const Trial* Search::ConfirmWorkers(const Trial* current) {
  const KnobSpec* k = Exposed(KnobRole::kWorkers);
  if (!k || !out_.baseline.count(k->name) || current_.at(k->name) == out_.baseline.at(k->name)) return current;
  const KnobValue chosen = current_.at(k->name), own = out_.baseline.at(k->name);
  const Trial* t = Measure(StageKind::kFull, With(k->name, own), "full");
  if (!t) return nullptr;
  std::vector<int> ids = {current->id, t->id};
  // The verdict on readings taken back to back, where the machine's speed moves between trials.
  const Pair pair = BackToBack(current, t, o_.gain);
  current = pair.incumbent;
  t = pair.challenger;
  ids.insert(ids.end(), pair.ids.begin(), pair.ids.end());
  auto decide = [&](const std::string& text) {
    Decide("full", text + (pair.note.empty() ? "" : " (" + pair.note + ")") + ".", ids);
  };
  // "not distinguishable from ..." for a sentence, or that the readings back to back could not tell.
  auto tie = [&](const Trial& a, const Trial& b, const std::string& from) {
    return pair.undecided ? "not told apart " + from : NotDistinguishable(a, b, from);
  };
  const bool own_fewer = own.get<int64_t>() < chosen.get<int64_t>();
  const Order order =
      !Succeeded(*t) ? Order::kSlower : pair.undecided ? Order::kNotDistinguishable : Compare(*t, *current);
  const bool close = Succeeded(*t) && ScoreOf(*t).value >= ScoreOf(*current).value * (1 - o_.tolerance);
  if (!pair.undecided && FasterBy(*t, *current, o_.gain)) {
    current_[k->name] = own;
    decide(fmt::format("In full training the script's own {}={} runs at {} against {} with {}={}: the loader and the "
                       "model share the CPU here, so {} stays {}",
                       k->name, ValueText(own), RateWithInterval(*t), RateWithInterval(*current), k->name,
                       ValueText(chosen), k->name, ValueText(own)));
    return t;
  }
  if (own_fewer && Succeeded(*t) && (order != Order::kSlower || close)) {
    current_[k->name] = own;
    const std::string versus = fmt::format("{}={}", k->name, ValueText(chosen));
    decide(fmt::format("In full training the script's own {}={} is {}: the fewer workers stay", k->name,
                       ValueText(own),
                       order == Order::kNotDistinguishable
                           ? tie(*t, *current, "from " + versus)
                           : fmt::format("within {} of {} ({} against {})", FormatShare(o_.tolerance), versus,
                                         RateWithInterval(*t), RateWithInterval(*current))));
    return t;
  }
  if (order == Order::kNotDistinguishable)
    decide(fmt::format("In full training {}={} holds: it is {}, and fewer workers use less RAM", k->name,
                       ValueText(chosen), tie(*current, *t, "from the script's own " + ValueText(own))));
  else
    decide(fmt::format("In full training {}={} holds: {} against {} with the script's own {}", k->name,
                       ValueText(chosen), RateWithInterval(*current),
                       Succeeded(*t) ? RateWithInterval(*t) : FailureText(*t), ValueText(own)));
  return current;
}

}  // namespace sat::tune::internal
