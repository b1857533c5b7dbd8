#include "tune/search.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "tune/compare.h"
#include "tune/flag_map.h"
#include "tune/levels.h"
#include "tune/search_internal.h"
#include "util/strings.h"

namespace sat::tune {

using core::StageKind;

std::string_view StrategyName(Strategy s) { return s == Strategy::kGrid ? "grid" : "guided"; }

const Trial* SearchOutcome::FindTrial(std::optional<int> id) const {
  if (!id || *id < 1 || *id > static_cast<int>(trials.size())) return nullptr;
  return &trials[static_cast<size_t>(*id - 1)];
}

SearchOutcome RunSearch(const SearchOptions& options, const TrialFn& run_trial) {
  return internal::Search(options, run_trial).Run();
}

namespace internal {

Search::Search(const SearchOptions& o, const TrialFn& fn) : o_(o), fn_(fn) {
  for (const auto& k : o.knobs) out_.knobs.push_back({k, false, std::nullopt, ""});
}

SearchOutcome Search::Run() {
  Baseline();
  ProveFlags();
  if (o_.strategy == Strategy::kGrid) {
    Grid();
  } else {
    Plan();
    Ceilings();
    // The ceilings point at the knob to tune first (the plan gives every step its first trials whatever the
    // order, so the order decides where refinements go first): loading in line comes first whatever the
    // ceilings say; a loader that keeps up leaves the model as the limit, so mixed precision and the batch come
    // before the worker count, which is then chosen against the ceiling they raised; otherwise the loader first.
    if (!LoadsInLine() && LoaderKeepsUp()) order_ = {"amp", "batch", "workers", "full", "confirm"};
    for (const std::string& step : order_) {
      if (step == "workers") Workers();
      else if (step == "amp") Amp();
      else if (step == "batch") Batch();
      else if (step == "full") Full();
      else if (step == "confirm") Confirm();
    }
  }
  Conclude();
  out_.trials.assign(trials_.begin(), trials_.end());
  return std::move(out_);
}

// ---- trials ---------------------------------------------------------------------------------------------------

const Trial* Search::Measure(StageKind mode, const KnobValues& knobs, const std::string& step, int repeat) {
  TrialRequest req{mode, knobs, step, repeat, {}};
  // Compute mode loads one batch only: workers do not matter there, so it keeps the baseline's (one
  // measurement serves every worker count, and no idle workers compete with the model for the CPU).
  if (const KnobSpec* w = Exposed(KnobRole::kWorkers); w && mode == StageKind::kCompute && out_.baseline.count(w->name))
    req.knobs[w->name] = out_.baseline.at(w->name);
  AddFlags(req);
  for (const auto& t : trials_) {
    if (t.interrupted || !t.request.SameMeasurement(req)) continue;
    auto again = again_.find(t.id);
    return again != again_.end() ? Find(again->second) : &t;
  }
  const Trial* t = Run(req);
  // A run that saturate stopped but whose estimate did not settle (a stall, a disturbed end) gets one more run,
  // so that one unlucky run does not leave a step with nothing to compare; the later run stands for both.
  if (t && Succeeded(*t) && !Reliable(*t) && !t->too_slow && t->exit_class == run::ExitClass::kStopped &&
      AgainAffordable()) {
    const int first = t->id;
    if (const Trial* second = Run(AgainRequest(*t))) {
      again_[first] = second->id;
      return second;
    }
  }
  return t;
}

const Trial* Search::Run(const TrialRequest& request) {
  const bool confirmation = request.step == "confirm";
  if (out_.stopped && !(confirmation && out_.kept_for_confirmation)) return nullptr;
  // Only once there is something to confirm: a change from the baseline adopted (confirming the script's own
  // settings would measure nothing new), and never before the baseline.
  if (!confirmation && out_.baseline_trial && current_ != out_.baseline && o_.strategy == Strategy::kGuided &&
      o_.keep_for_confirmation && o_.keep_for_confirmation()) {
    out_.stopped = true;
    out_.kept_for_confirmation = true;
    return nullptr;
  }
  // Beyond its first trials, a step runs one only while its share of the plan holds one; the search goes on.
  if (!Affordable()) return nullptr;
  TrialRequest req = request;
  AddFlags(req);
  int id = static_cast<int>(trials_.size()) + 1;
  std::optional<Trial> t = fn_(id, req);
  if (!t) {
    out_.stopped = true;
    return nullptr;
  }
  // A run again refines a measurement: the step's first trials are still to come.
  if (!running_.empty()) ++(req.repeat >= kFirstAgainRepeat ? again_used_ : used_)[running_];
  t->id = id;
  t->request = std::move(req);
  trials_.push_back(std::move(*t));
  const Trial& stored = trials_.back();
  if (stored.interrupted) {
    out_.stopped = true;
    return nullptr;
  }
  if (out_.loader_key.empty() && !stored.loader_key.empty()) {
    out_.loader_key = stored.loader_key;
    out_.loader_site = stored.loader_site;
  }
  CheckKnobsTaken(stored);
  return &stored;
}

void Search::AddFlags(TrialRequest& request) const {
  for (const auto& k : out_.knobs)
    if (k.spec.delivery == Delivery::kFlag && k.spec.flag && request.knobs.count(k.spec.name))
      request.flags.emplace(k.spec.name, *k.spec.flag);
}

// A knob the script got with another value than the one sent (a type mismatch in saturate.knob), or one the
// automatic instrumentation could not set: said once per knob.
void Search::CheckKnobsTaken(const Trial& t) {
  for (const auto& [name, sent] : t.request.knobs) {
    KnobState* k = State(name);
    if (!k || warned_.count(name)) continue;
    std::string problem;
    auto got = t.knobs_seen.find(name);
    if (auto error = t.knob_errors.find(name); error != t.knob_errors.end())
      problem = fmt::format("{}={} could not be set: {}", name, ValueText(sent), error->second);
    else if ((k->spec.delivery == Delivery::kHelper || k->spec.delivery == Delivery::kFlag) &&
             got != t.knobs_seen.end() && got->second != sent)
      problem = fmt::format("the script got {}={} when saturate sent {} (check the type of its saturate.knob "
                            "default)",
                            name, ValueText(got->second), ValueText(sent));
    else if (k->spec.delivery == Delivery::kInjected && got != t.knobs_seen.end() && got->second != sent)
      problem = fmt::format("{}={} was in effect when saturate injected {}", name, ValueText(got->second),
                            ValueText(sent));
    if (problem.empty()) continue;
    warned_.insert(name);
    k->note += (k->note.empty() ? "" : "; ") + problem;
    out_.warnings.push_back(problem);
  }
}

const Trial* Search::Find(std::optional<int> id) const {
  if (!id || *id < 1 || *id > static_cast<int>(trials_.size())) return nullptr;
  return &trials_[static_cast<size_t>(*id - 1)];
}

void Search::Decide(const std::string& step, std::string text, std::vector<int> trials) {
  out_.decisions.push_back({step, std::move(text), std::move(trials)});
}

KnobState* Search::State(const std::string& name) {
  for (auto& k : out_.knobs)
    if (k.spec.name == name) return &k;
  return nullptr;
}

const KnobSpec* Search::Exposed(KnobRole role) const {
  for (const auto& k : out_.knobs)
    if (k.spec.role == role && k.exposed) return &k.spec;
  return nullptr;
}

KnobValues Search::With(const std::string& name, const KnobValue& v) const {
  KnobValues out = current_;
  out[name] = v;
  return out;
}

std::vector<std::string> Search::KnobOrder() const {
  std::vector<std::string> order;
  for (const auto& k : out_.knobs) order.push_back(k.spec.name);
  return order;
}

const Trial* Search::Pipe(const Trial* t) const {
  if (t == nullptr || !t->score) return t;
  auto [it, added] = pipes_.try_emplace(t->id, *t);
  if (added) it->second.score.reset();
  return &it->second;
}

bool Search::LoaderKeepsUp() const {
  const Trial* loader = Pipe(Find(out_.loader_ceiling_trial));
  const Trial* compute = Pipe(Find(out_.compute_ceiling_trial));
  return loader && compute && Compare(*loader, *compute) == Order::kFaster;
}

bool Search::LoadsInLine() const {
  const KnobSpec* w = Exposed(KnobRole::kWorkers);
  auto now = w ? current_.find(w->name) : current_.end();
  if (now == current_.end() || !now->second.is_number_integer() || now->second.get<int64_t>() != 0) return false;
  const Trial* base = Pipe(Find(out_.baseline_trial));
  const Trial* loader = Pipe(Find(out_.loader_ceiling_trial));
  const Trial* compute = Pipe(Find(out_.compute_ceiling_trial));
  if (!base || !loader || !compute || !Reliable(*base) || !Reliable(*loader) || !Reliable(*compute)) return false;
  return base->ci_high < (1 - o_.loader_margin) * std::min(loader->ci_low, compute->ci_low);
}

StageKind Search::LoaderMode() const { return out_.helper ? StageKind::kLoader : StageKind::kFull; }
StageKind Search::ComputeMode() const { return out_.helper ? StageKind::kCompute : StageKind::kFull; }
bool Search::Fits(const Trial& t) const { return Succeeded(t) && !OverMemoryTarget(t, o_.mem_target); }

// ---- 1. baseline and ceilings ---------------------------------------------------------------------------------

void Search::Baseline() {
  KnobValues start;
  for (const auto& k : o_.knobs)
    if (k.delivery == Delivery::kPlaceholder) start[k.name] = k.Start();
  const Trial* t = Measure(StageKind::kFull, start, "baseline");
  if (!t) {
    out_.failed = true;
    out_.failure = "no trial could run (the budget was spent or saturate was interrupted)";
    return;
  }
  out_.helper = t->helper_seen;
  current_ = start;
  Discover(*t);

  // A baseline that runs out of memory gets smaller batches until one runs.
  const KnobSpec* batch = Exposed(KnobRole::kBatchSize);
  while (t && !Succeeded(*t) && OutOfMemory(*t) && batch) {
    int64_t b = current_.at(batch->name).get<int64_t>();
    if (b <= batch->lo) break;
    current_[batch->name] = std::max(batch->lo, b / 2);
    t = Measure(StageKind::kFull, current_, "baseline");
  }
  if (!t) {
    out_.failed = true;
    out_.failure = "the budget ran out before the baseline ran";
    return;
  }
  if (!Succeeded(*t)) {
    out_.failed = true;
    out_.failure = t->samples_per_s <= 0 && !t->too_slow && !OutOfMemory(*t) &&
                           t->exit_class != run::ExitClass::kFailed && t->exit_class != run::ExitClass::kStartFailed
                       ? "the command reported no throughput: use the helper (import saturate; "
                         "saturate.track(loader)) or --parse"
                       : fmt::format("the baseline run {}", FailureText(*t));
    Decide("baseline", "Nothing to tune: " + out_.failure + ".", {t->id});
    return;
  }
  out_.baseline = current_;
  out_.baseline_trial = t->id;
  std::string settings = ValuesText(current_, KnobOrder());
  std::string why = UnreliableWhy(*t);
  Decide("baseline",
         fmt::format("Baseline ({}): {} in full training{}.",
                     settings.empty() ? "the script's own settings" : settings, RateWithInterval(*t),
                     why.empty() ? "" : fmt::format("; trial {} {}, so no comparison can rest on it", t->id, why)),
         {t->id});
}

// Which knobs the script exposes, and its own values for the helper and injected knobs.
void Search::Discover(const Trial& baseline) {
  for (auto& k : out_.knobs) {
    const std::string& name = k.spec.name;
    switch (k.spec.delivery) {
      case Delivery::kPlaceholder: k.exposed = true; break;
      case Delivery::kEnvironment:
        k.exposed = o_.gpu;
        if (o_.gpu) current_[name] = k.spec.Start();
        else k.note = "skipped: no GPU, so the CUDA allocator setting does not apply";
        break;
      case Delivery::kHelper:
      case Delivery::kInjected:
      case Delivery::kFlag: {
        auto it = baseline.knobs_seen.find(name);
        if (it != baseline.knobs_seen.end()) {
          k.exposed = true;
          k.script_value = it->second;
          current_[name] = it->second;
          if (baseline.knobs_auto.count(name)) {
            k.spec.delivery = Delivery::kInjected;
            k.note = k.spec.role == KnobRole::kAmp
                         ? "injected: the script has no flag for it; saturate runs the model's forward under "
                           "torch.autocast"
                         : fmt::format("injected: the script has no flag for it; saturate sets it on the training "
                                       "DataLoader{}",
                                       baseline.loader_site.empty() ? "" : " at " + baseline.loader_site);
          } else if (auto flag = baseline.knob_flags.find(name); flag != baseline.knob_flags.end()) {
            k.spec.delivery = Delivery::kFlag;
            k.spec.flag = NamedBinding(flag->second, baseline.script_flags, it->second);
            k.spec.flag_proof = fmt::format("the script reads it as saturate.knob(\"{}\", ..., flag=\"{}\")", name,
                                            flag->second);
            k.note = fmt::format("set by the script's own {} ({})", flag->second, k.spec.flag_proof);
          }
        } else if (!baseline.helper_seen) {
          k.note = fmt::format("skipped: the script does not use the helper and the command has no {{{}}}", name);
        } else if (baseline.auto_seen) {
          k.note = fmt::format("skipped: the command has no {{{}}}, and saturate cannot set it in this script (it "
                               "sets the training DataLoader's workers, batch_size, pin_memory, prefetch_factor and "
                               "persistent_workers, and amp)",
                               name);
        } else {
          k.note = fmt::format("skipped: the script does not expose it (no {{{}}} in the command, no "
                               "saturate.knob(\"{}\", ...))",
                               name, name);
        }
        break;
      }
    }
  }
}

// Knobs saturate would inject whose value one of the script's own options carries: one run with those options
// changed proves which of them the training DataLoader (or autocast) follows; those become flags.
void Search::ProveFlags() {
  if (out_.failed || out_.stopped) return;
  const Trial* base = Find(out_.baseline_trial);
  if (!base) return;
  std::vector<std::string> ambiguous;
  const std::vector<FlagCandidate> candidates = FindCandidates(out_.knobs, base->script_flags, &ambiguous);
  for (const auto& note : ambiguous) Decide("flags", note + ".", {base->id});
  if (candidates.empty()) return;
  TrialRequest proof{StageKind::kFull, {}, "flags", 0, {}};
  std::string changed;
  for (const auto& c : candidates) {
    proof.knobs[c.knob] = c.proof;
    proof.flags[c.knob] = c.flag;
    changed += fmt::format("{}{} {}", changed.empty() ? "" : " ", c.flag.option, ValueText(c.proof));
  }
  const Trial* t = Run(proof);
  if (!t) return;
  std::vector<std::string> proven, not_proven;
  for (const auto& c : candidates) {
    KnobState* k = State(c.knob);
    const std::string why = Unproven(c, *t);
    if (why.empty()) {
      k->spec.delivery = Delivery::kFlag;
      k->spec.flag = c.flag;
      k->spec.flag_proof = fmt::format("trial {} ran with {} {} and the training DataLoader had {}={}", t->id,
                                       c.flag.option, ValueText(c.proof), c.knob, ValueText(c.proof));
      k->note = fmt::format("set by the script's own {} (its value {} in the baseline; proven: {})", c.flag.option,
                            ValueText(*k->script_value), k->spec.flag_proof);
      proven.push_back(fmt::format("{} is set by {}", c.knob, c.flag.option));
    } else {
      k->note += fmt::format("; {} carries its value but does not set it: {}", c.flag.option, why);
      not_proven.push_back(fmt::format("{} is not set by {} ({})", c.knob, c.flag.option, why));
    }
  }
  std::string text = fmt::format("The script's own options carry the values saturate would inject; one run with "
                                 "{} tells which ones the DataLoader follows: ",
                                 changed);
  for (const auto* list : {&proven, &not_proven})
    for (const auto& s : *list) text += (text.back() == ' ' ? "" : "; ") + s;
  text += proven.empty() ? ". Every knob stays injected."
                         : ". The recommendation sets these with the script's own flags.";
  Decide("flags", text, {base->id, t->id});
}

void Search::Ceilings() {
  if (out_.failed || out_.stopped) return;
  if (!out_.helper) {
    Decide("ceiling",
           "The script does not report through the helper, so loader-only and compute-only runs are not "
           "possible: every trial is full training.");
    return;
  }
  const Trial* loader = Pipe(Measure(StageKind::kLoader, current_, "ceiling"));
  const Trial* compute = Pipe(Measure(StageKind::kCompute, current_, "ceiling"));
  if (!loader || !compute) return;
  if (Succeeded(*loader)) out_.loader_ceiling_trial = loader->id;
  if (Succeeded(*compute)) out_.compute_ceiling_trial = compute->id;
  if (!Succeeded(*loader) || !Succeeded(*compute)) {
    Decide("ceiling", fmt::format("A ceiling could not be measured: the loader alone {}, the model alone {}.",
                                  Succeeded(*loader) ? FormatRate(loader->samples_per_s) : FailureText(*loader),
                                  Succeeded(*compute) ? FormatRate(compute->samples_per_s) : FailureText(*compute)),
           {loader->id, compute->id});
    return;
  }
  const Trial* base = Pipe(Find(out_.baseline_trial));
  std::string share;
  if (base && Reliable(*base) && Reliable(*compute))
    share = fmt::format(" Training reaches {} of that ceiling.",
                        FormatShare(base->samples_per_s / compute->samples_per_s));
  std::string verdict;
  switch (Compare(*loader, *compute)) {
    case Order::kSlower: verdict = "Loading holds it back."; break;
    case Order::kFaster: verdict = "The loader keeps up."; break;
    case Order::kNotDistinguishable:
      verdict = "Whether loading holds it back cannot be said: the loader is " +
                NotDistinguishable(*loader, *compute, "from the model") + ".";
      break;
  }
  if (LoadsInLine())
    verdict += " But training this far below both ceilings with no loader workers means that loading and computing "
               "take turns in one process, so the worker count comes first.";
  Decide("ceiling",
         fmt::format("The loader alone delivers {}; the model alone (the compute ceiling) {}.{} {}",
                     RateWithInterval(*loader), RateWithInterval(*compute), share, verdict),
         {loader->id, compute->id});
}

// ---- 6. confirmation ------------------------------------------------------------------------------------------

// A machine whose speed moves by 2-3x within minutes (docs/benchmarks.md, tune run 7: the same command 751, 878 and
// 1,942 samples/s in three rounds) makes every comparison of one trial against another follow the machine rather
// than the settings, and the recommendation with them. The confirmation repeats settings the search already ran in
// full training, so the two readings show it: 1,903 samples/s ±2% and then 1,090 ±2% in one tune of that run.
std::string Search::MachineDrift(const Trial& confirm) const {
  const Trial* earlier = nullptr;
  for (const Trial& t : trials_) {
    if (&t != &confirm && t.request.mode == StageKind::kFull && t.request.step != "confirm" &&
        t.request.knobs == confirm.request.knobs && Succeeded(t) && Reliable(t))
      earlier = &t;
  }
  return earlier ? MachineMoved(*earlier, confirm, "in the confirmation") : "";
}

std::string Search::MachineMoved(const Trial& earlier, const Trial& later, const std::string& when) const {
  if (!Reliable(earlier) || !Reliable(later) || Compare(later, earlier) == Order::kNotDistinguishable) return "";
  const double before = ScoreOf(earlier).value, now = ScoreOf(later).value;
  if (before <= 0 || std::abs(now / before - 1) <= kMachineDrift) return "";
  return fmt::format("this machine's speed moved during the search: the same settings trained at {} in trial {} and "
                     "at {} {} ({:+.0f}%), so the comparisons behind the recommendation may follow the machine rather "
                     "than the settings; tune again while nothing else runs",
                     RateWithInterval(earlier), earlier.id, RateWithInterval(later), when, 100 * (now / before - 1));
}

// The baseline ran minutes before the confirmation. Where the two readings are not to be compared as they stand (the
// confirmation slower than the baseline, or the machine's speed seen to move), the baseline runs again right after
// the confirmation, while the budget holds a run, so that the verdict and the speed-up rest on readings taken back to
// back: in run 7 a tune fell back to the script's own settings (1.00x) on a confirmation that read slower than a
// baseline measured four minutes earlier. Returns that reading, or null.
const Trial* Search::BaselineAgain(const Trial& confirm, const Trial& base) {
  const Trial* again = Measure(StageKind::kFull, out_.baseline, "confirm", 1);
  // A reading that does not count would only replace a verdict with none.
  if (!again || !Succeeded(*again) || !Reliable(*again) || again == &base || again == &confirm) return nullptr;
  out_.baseline_again_trial = again->id;
  WarnMachineMoved(MachineMoved(base, *again, "when measured again after the confirmation"));
  return again;
}

void Search::WarnMachineMoved(const std::string& text) {
  if (text.empty() || std::any_of(out_.warnings.begin(), out_.warnings.end(), [](const std::string& w) {
        return w.rfind("this machine's speed moved", 0) == 0;
      }))
    return;
  out_.warnings.push_back(text);
}

void Search::Confirm() {
  StepScope scope(this, "confirm");
  if (out_.failed || (out_.stopped && !out_.kept_for_confirmation)) return;
  const Trial* t = Measure(StageKind::kFull, current_, "confirm", 1);
  if (!t) return;
  const Trial* base = Find(out_.baseline_trial);
  if (!Succeeded(*t)) {
    Decide("confirm", fmt::format("The confirmation run {}: the recommendation is not reliable.", FailureText(*t)),
           {t->id});
    out_.warnings.push_back("the confirmation run of the recommendation failed: " + FailureText(*t));
    return;
  }
  out_.confirm_trial = t->id;
  const std::string drift = MachineDrift(*t);
  WarnMachineMoved(drift);
  if (!base) return;
  if (current_ == out_.baseline) {
    Decide("confirm", fmt::format("Confirmed at {}: the script's own settings were already the best found.",
                                  RateWithInterval(*t)),
           {base->id, t->id});
    return;
  }
  std::vector<int> ids = {base->id, t->id};
  // Said before the verdict where the baseline was measured again: what it read at the start.
  std::string again_text;
  if (Compare(*t, *base) == Order::kSlower || !drift.empty()) {
    if (const Trial* again = BaselineAgain(*t, *base)) {
      again_text = fmt::format("The baseline, measured again right after the confirmation, trained at {} (it read {} "
                               "at the start); the verdict rests on the two readings taken back to back. ",
                               RateWithInterval(*again), RateWithInterval(*base));
      ids.push_back(again->id);
      base = again;
    }
  }
  if (Compare(*t, *base) != Order::kSlower) {
    Decide("confirm", again_text + ConfirmedText(*t, *base), ids);
    return;
  }
  // Measured worse than what the script does on its own. One unlucky run should not throw away the search: the
  // best other configuration full training measured is confirmed in its place, when the budget holds a run.
  const ObjectiveWords words = WordsFor(o_.objective);
  std::string text = fmt::format("{}The recommendation ({}) trained {} than the baseline ({} against {})", again_text,
                                 ValuesText(current_, KnobOrder()), words.worse, RateWithInterval(*t),
                                 RateWithInterval(*base));
  if (const Trial* alt = RunnerUp(*Find(out_.baseline_trial), current_)) {
    ids.push_back(alt->id);
    const Trial* again = Measure(StageKind::kFull, alt->request.knobs, "confirm", 1);
    if (again) ids.push_back(again->id);
    if (again && Succeeded(*again) && Compare(*again, *base) != Order::kSlower) {
      current_ = alt->request.knobs;
      out_.confirm_trial = again->id;
      Decide("confirm", fmt::format("{}; the best other configuration measured in full training, {} (trial {}, {}), "
                                    "was confirmed in its place. {}",
                                    text, ValuesText(current_, KnobOrder()), alt->id, RateWithInterval(*alt),
                                    ConfirmedText(*again, *base)),
             ids);
      return;
    }
    text += again ? fmt::format("; the best other configuration measured in full training, {}, {} too ({})",
                                ValuesText(alt->request.knobs, KnobOrder()),
                                Succeeded(*again) ? "confirmed " + words.worse : FailureText(*again),
                                Succeeded(*again) ? RateWithInterval(*again) : "trial " + std::to_string(again->id))
                  : fmt::format("; the budget held no run to confirm the best other configuration measured, {}",
                                ValuesText(alt->request.knobs, KnobOrder()));
  }
  Decide("confirm", text + ": the script's own settings stay.", ids);
  out_.warnings.push_back(
      fmt::format("the tuned settings confirmed {} than the script's own: keep its settings", words.worse));
  current_ = out_.baseline;
  out_.confirm_trial = base->id;
}

std::string Search::ConfirmedText(const Trial& t, const Trial& base) const {
  const ObjectiveWords words = WordsFor(o_.objective);
  if (Compare(t, base) == Order::kNotDistinguishable)
    return fmt::format("Confirmed at {}, but {}: no {} can be claimed.", RateWithInterval(t),
                       NotDistinguishable(t, base, "from the baseline"), words.gain);
  if (FasterBy(t, base, o_.gain))
    return fmt::format("Confirmed: the recommendation {} {}, {} the baseline's {}.", words.reaches, RateWithInterval(t),
                       FormatTimes(ScoreOf(t).value / ScoreOf(base).value), RateWithInterval(base));
  return fmt::format("Confirmed at {}; the baseline's {} was already about as {} (less than {} apart): the script's "
                     "own settings were good.",
                     RateWithInterval(t), RateWithInterval(base), words.adjective, FormatShare(o_.gain));
}

const Trial* Search::RunnerUp(const Trial& base, const KnobValues& rejected) const {
  const Trial* best = nullptr;
  for (const auto& t : trials_) {
    // Full-training measurements of whole configurations: not the flags' proof (its values are decoys) nor a
    // confirmation.
    if (t.request.mode != StageKind::kFull || t.request.step == "flags" || t.request.step == "confirm" ||
        t.interrupted || !Reliable(t) || t.request.knobs == rejected || t.request.knobs == out_.baseline)
      continue;
    if (ScoreOf(t).value > ScoreOf(base).value && (!best || ScoreOf(t).value > ScoreOf(*best).value)) best = &t;
  }
  return best;
}

// ---- grid -----------------------------------------------------------------------------------------------------

void Search::Grid() {
  if (out_.failed) return;
  std::vector<const KnobSpec*> dims;
  for (const auto& k : out_.knobs)
    if (k.exposed) dims.push_back(&k.spec);
  std::vector<KnobValues> points = {current_};
  for (const KnobSpec* d : dims) {
    std::vector<KnobValues> next;
    for (const auto& p : points) {
      for (const auto& v : GridLevels(*d)) {
        KnobValues q = p;
        q[d->name] = v;
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  const Trial* best = nullptr;
  std::vector<const Trial*> measured;
  std::vector<int> ids;
  for (const auto& p : points) {
    const Trial* t = Measure(StageKind::kFull, p, "grid");
    if (!t) break;
    ids.push_back(t->id);
    measured.push_back(t);
    if (Reliable(*t) && (!best || ScoreOf(*t).value > ScoreOf(*best).value)) best = t;
  }
  if (!best) {
    if (!ids.empty())
      Decide("grid", fmt::format("No grid point could be measured reliably among {}: the script's own settings "
                                 "stay.",
                                 ids.size()),
             ids);
    return;
  }
  int ties = 0;
  for (const Trial* t : measured)
    if (t != best && Succeeded(*t) && Compare(*t, *best) == Order::kNotDistinguishable) ++ties;
  current_ = best->request.knobs;
  out_.confirm_trial = best->id;
  Decide("grid", fmt::format("The best of {} grid points is {}: {}{}.", ids.size(), ValuesText(current_, KnobOrder()),
                             RateWithInterval(*best),
                             ties == 0 ? ""
                                       : fmt::format("; {} other point{} {} not distinguishable from it", ties,
                                                     ties == 1 ? "" : "s", ties == 1 ? "is" : "are")),
         ids);
}

// ---- conclusion -----------------------------------------------------------------------------------------------

void Search::Conclude() {
  if (out_.failed) return;
  out_.recommended = current_;
  const KnobSpec* batch = Exposed(KnobRole::kBatchSize);
  out_.fastest = current_;
  if (batch && fastest_batch_) out_.fastest[batch->name] = *fastest_batch_;
  if (batch && largest_batch_) {
    out_.largest_fitting = current_;
    out_.largest_fitting[batch->name] = *largest_batch_;
  }
  std::map<int64_t, int> by_workers;
  const KnobSpec* workers = FindRole(o_.knobs, KnobRole::kWorkers);
  for (const auto& t : trials_) {
    if (t.request.mode != StageKind::kLoader || !workers || t.interrupted) continue;
    auto it = t.request.knobs.find(workers->name);
    if (it != t.request.knobs.end() && it->second.is_number_integer())
      by_workers.emplace(it->second.get<int64_t>(), t.id);
  }
  for (const auto& [w, id] : by_workers) out_.loader_curve.push_back(id);
  for (const auto& k : out_.knobs)
    if (k.spec.delivery == Delivery::kInjected) out_.injected.push_back(k.spec.name);
  if (out_.kept_for_confirmation) {
    Decide("stop", "The search stopped early to keep the last of the budget for the confirmation run: the "
                   "recommendation uses what was measured.");
  } else if (out_.stopped) {
    Decide("stop", "The search stopped early (budget or interrupt): the recommendation uses what was measured.");
  }
}

}  // namespace internal
}  // namespace sat::tune
