#include "tune/search.h"

#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <map>

#include "tune/levels.h"
#include "tune/text.h"

namespace sat::tune {

using probe::StageKind;

std::string_view StrategyName(Strategy s) { return s == Strategy::kGrid ? "grid" : "guided"; }

const Trial* SearchOutcome::FindTrial(std::optional<int> id) const {
  if (!id || *id < 1 || *id > static_cast<int>(trials.size())) return nullptr;
  return &trials[static_cast<size_t>(*id - 1)];
}

namespace {

// Below this batch size per device the guides warn: noisy batch-norm statistics, a poorly used GPU.
constexpr int64_t kSmallBatch = 16;
// A worker count must add this much loader throughput over fewer workers to count as progress.
constexpr double kWorkerStep = 0.05;

std::string FailureText(const Trial& t) {
  if (t.exit_class == run::ExitClass::kGpuOom) return "ran out of GPU memory";
  if (t.exit_class == run::ExitClass::kHostOom) return "ran out of host memory";
  if (Succeeded(t) || t.samples_per_s > 0 || !t.detail.empty())
    return fmt::format("failed ({}: {})", run::ExitClassName(t.exit_class), t.detail);
  return fmt::format("failed ({})", run::ExitClassName(t.exit_class));
}

class Search {
 public:
  Search(const SearchOptions& o, const TrialFn& fn) : o_(o), fn_(fn) {
    for (const auto& k : o.knobs) out_.knobs.push_back({k, false, std::nullopt, ""});
  }

  SearchOutcome Run() {
    Baseline();
    if (o_.strategy == Strategy::kGrid) {
      Grid();
    } else {
      Ceilings();
      Workers();
      Amp();
      Batch();
      Full();
      Confirm();
    }
    Conclude();
    out_.trials.assign(trials_.begin(), trials_.end());
    return std::move(out_);
  }

 private:
  // ---- trials ------------------------------------------------------------------------------------------------

  // The trial for this request: an earlier identical one, or a new one. Null once the search has stopped.
  const Trial* Measure(StageKind mode, const KnobValues& knobs, const std::string& step, int repeat = 0) {
    TrialRequest req{mode, knobs, step, repeat};
    // Compute mode loads one batch only: workers do not matter there, so it keeps the baseline's (one
    // measurement serves every worker count, and no idle workers compete with the model for the CPU).
    if (const KnobSpec* w = Exposed(KnobRole::kWorkers); w && mode == StageKind::kCompute && out_.baseline.count(w->name))
      req.knobs[w->name] = out_.baseline.at(w->name);
    for (const auto& t : trials_)
      if (!t.interrupted && t.request.SameMeasurement(req)) return &t;
    if (out_.stopped) return nullptr;
    int id = static_cast<int>(trials_.size()) + 1;
    std::optional<Trial> t = fn_(id, req);
    if (!t) {
      out_.stopped = true;
      return nullptr;
    }
    t->id = id;
    t->request = std::move(req);
    trials_.push_back(std::move(*t));
    const Trial& stored = trials_.back();
    if (stored.interrupted) {
      out_.stopped = true;
      return nullptr;
    }
    CheckKnobsTaken(stored);
    return &stored;
  }

  // A helper knob the script read with another value than the one sent: a type mismatch in saturate.knob.
  void CheckKnobsTaken(const Trial& t) {
    for (const auto& [name, sent] : t.request.knobs) {
      KnobState* k = State(name);
      auto got = t.knobs_seen.find(name);
      if (!k || k->spec.delivery != Delivery::kHelper || got == t.knobs_seen.end() || got->second == sent) continue;
      if (!k->note.empty()) continue;
      k->note = fmt::format("the script got {}={} when saturate sent {} (check the type of its saturate.knob default)",
                            name, ValueText(got->second), ValueText(sent));
      out_.warnings.push_back(k->note);
    }
  }

  // A trial of this search by id (the outcome's list is filled only at the end).
  const Trial* Find(std::optional<int> id) const {
    if (!id || *id < 1 || *id > static_cast<int>(trials_.size())) return nullptr;
    return &trials_[static_cast<size_t>(*id - 1)];
  }

  void Decide(const std::string& step, std::string text, std::vector<int> trials = {}) {
    out_.decisions.push_back({step, std::move(text), std::move(trials)});
  }

  KnobState* State(const std::string& name) {
    for (auto& k : out_.knobs)
      if (k.spec.name == name) return &k;
    return nullptr;
  }
  const KnobSpec* Exposed(KnobRole role) const {
    for (const auto& k : out_.knobs)
      if (k.spec.role == role && k.exposed) return &k.spec;
    return nullptr;
  }
  KnobValues With(const std::string& name, const KnobValue& v) const {
    KnobValues out = current_;
    out[name] = v;
    return out;
  }
  // Loader and compute modes need the helper; without it every measurement is full training.
  StageKind LoaderMode() const { return out_.helper ? StageKind::kLoader : StageKind::kFull; }
  StageKind ComputeMode() const { return out_.helper ? StageKind::kCompute : StageKind::kFull; }
  bool Fits(const Trial& t) const { return Succeeded(t) && !OverMemoryTarget(t, o_.mem_target); }
  const char* Engine() const { return o_.gpu ? "the GPU" : "the model"; }

  // ---- 1. baseline and ceilings -------------------------------------------------------------------------------

  void Baseline() {
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
      out_.failure = t->samples_per_s <= 0 && !OutOfMemory(*t) && t->exit_class != run::ExitClass::kFailed &&
                             t->exit_class != run::ExitClass::kStartFailed
                         ? "the command reported no throughput: use the helper (import saturate; "
                           "saturate.track(loader)) or --parse"
                         : fmt::format("the baseline run {}", FailureText(*t));
      Decide("baseline", "Nothing to tune: " + out_.failure + ".", {t->id});
      return;
    }
    out_.baseline = current_;
    out_.baseline_trial = t->id;
    std::string settings = ValuesText(current_, KnobOrder());
    Decide("baseline",
           fmt::format("Baseline ({}): {} in full training.",
                       settings.empty() ? "the script's own settings" : settings, Rate(t->samples_per_s)),
           {t->id});
  }

  // Which knobs the script exposes, and its own values for the helper knobs.
  void Discover(const Trial& baseline) {
    for (auto& k : out_.knobs) {
      const std::string& name = k.spec.name;
      switch (k.spec.delivery) {
        case Delivery::kPlaceholder: k.exposed = true; break;
        case Delivery::kEnvironment:
          k.exposed = o_.gpu;
          if (o_.gpu) current_[name] = k.spec.Start();
          else k.note = "skipped: no GPU, so the CUDA allocator setting does not apply";
          break;
        case Delivery::kHelper: {
          auto it = baseline.knobs_seen.find(name);
          if (it != baseline.knobs_seen.end()) {
            k.exposed = true;
            k.script_value = it->second;
            current_[name] = it->second;
          } else if (!baseline.helper_seen) {
            k.note = fmt::format("skipped: the script does not use the helper and the command has no {{{}}}", name);
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

  std::vector<std::string> KnobOrder() const {
    std::vector<std::string> order;
    for (const auto& k : out_.knobs) order.push_back(k.spec.name);
    return order;
  }

  void Ceilings() {
    if (out_.failed || out_.stopped) return;
    if (!out_.helper) {
      Decide("ceiling",
             "The script does not report through the helper, so loader-only and compute-only runs are not "
             "possible: every trial is full training.");
      return;
    }
    const Trial* loader = Measure(StageKind::kLoader, current_, "ceiling");
    const Trial* compute = Measure(StageKind::kCompute, current_, "ceiling");
    if (!loader || !compute) return;
    if (Succeeded(*loader)) out_.loader_ceiling_trial = loader->id;
    if (Succeeded(*compute)) out_.compute_ceiling_trial = compute->id;
    if (!Succeeded(*loader) || !Succeeded(*compute)) {
      Decide("ceiling", fmt::format("A ceiling could not be measured: the loader alone {}, the model alone {}.",
                                    Succeeded(*loader) ? Rate(loader->samples_per_s) : FailureText(*loader),
                                    Succeeded(*compute) ? Rate(compute->samples_per_s) : FailureText(*compute)),
             {loader->id, compute->id});
      return;
    }
    const Trial* base = Find(out_.baseline_trial);
    double full = base ? base->samples_per_s : 0;
    bool loader_bound = loader->samples_per_s < compute->samples_per_s;
    Decide("ceiling",
           fmt::format("The loader alone delivers {}; the model alone (the compute ceiling) {}. Training reaches {} "
                       "of that ceiling: {}.",
                       Rate(loader->samples_per_s), Rate(compute->samples_per_s),
                       Percent(full / compute->samples_per_s),
                       loader_bound ? "loading holds it back" : "the loader keeps up"),
           {loader->id, compute->id});
  }

  // ---- 2. workers ---------------------------------------------------------------------------------------------

  // What the loader alone must deliver at `w` workers for the model never to wait. With workers, loading overlaps
  // the model: the loader must clear the ceiling by the margin. With none, loading runs in line with every step:
  // training stays within the margin of the ceiling only when loading takes under that share, L >= C / margin.
  double Need(int64_t w, double ceiling) const {
    return w == 0 ? ceiling / o_.loader_margin : ceiling * (1 + o_.loader_margin);
  }
  // The training throughput a loader rate promises at `w` workers: in line (no workers) the times per sample
  // add; with workers the slower side sets the pace.
  double Promised(int64_t w, double loader, double ceiling) const {
    if (ceiling <= 0) return loader;
    return w == 0 ? 1 / (1 / loader + 1 / ceiling) : std::min(loader, ceiling);
  }

  // Why a worker scan ended before the end of the range.
  struct ScanStop {
    int64_t level = -1;  // the worker count it stopped at
    std::string text;
  };

  // Scans worker counts from the bottom until the loader clears what the `ceiling` needs (0: no ceiling known,
  // scan until more workers stop helping) and returns the chosen count; nullopt when nothing ran.
  std::optional<int64_t> ScanWorkers(const KnobSpec& k, double ceiling, std::map<int64_t, const Trial*>& seen,
                                     ScanStop* why_stop) {
    auto measure = [&](int64_t w) {
      KnobValues v = worker_base_;
      v[k.name] = w;
      const Trial* t = Measure(LoaderMode(), v, "workers");
      if (t) seen[w] = t;
      return t;
    };
    auto clears = [&](int64_t w, const Trial& t) {
      return ceiling > 0 && Succeeded(t) && t.samples_per_s >= Need(w, ceiling);
    };
    std::optional<int64_t> clearing, below;
    double best = 0;
    for (int64_t w : DoublingLevels(k.lo, k.hi)) {
      const Trial* t = measure(w);
      if (!t) break;
      if (!Succeeded(*t)) {
        *why_stop = {w, fmt::format("{} workers {}", w, FailureText(*t))};
        break;
      }
      if (clears(w, *t)) {
        clearing = w;
        break;
      }
      // One worker only moves loading out of the main process; from two on, each level must add throughput.
      if (w >= 2 && t->samples_per_s < best * (1 + kWorkerStep)) {
        *why_stop = {w, fmt::format("{} workers add less than {} over fewer", w, Percent(kWorkerStep))};
        break;
      }
      best = std::max(best, t->samples_per_s);
      below = w;
    }
    // The fewest clearing workers lie between the last level below the need and the first above it.
    if (clearing && below) {
      int64_t lo = *below, hi = *clearing;
      while (auto mid = BisectMidpoint(lo, hi, 1)) {
        const Trial* t = measure(*mid);
        if (!t) break;
        if (clears(*mid, *t)) hi = *mid;
        else lo = *mid;
      }
      clearing = hi;
    }
    if (clearing) return clearing;
    std::vector<Point> points;
    for (const auto& [w, t] : seen)
      if (Succeeded(*t)) points.push_back({w, Promised(w, t->samples_per_s, ceiling)});
    return SmallestWithin(points, o_.tolerance);
  }

  void Workers() {
    const KnobSpec* k = Exposed(KnobRole::kWorkers);
    if (out_.failed || out_.stopped || !k) return;
    worker_base_ = current_;
    const Trial* compute = Find(out_.compute_ceiling_trial);
    ChooseWorkers(*k, compute ? compute->samples_per_s : 0, false);
  }

  // Chooses the worker count against a compute rate (0: none known) and says why.
  void ChooseWorkers(const KnobSpec& k, double ceiling, bool recheck) {
    std::map<int64_t, const Trial*> seen;
    ScanStop why_stop;
    std::optional<int64_t> choice = ScanWorkers(k, ceiling, seen, &why_stop);
    std::vector<int> ids;
    for (const auto& [w, t] : seen) ids.push_back(t->id);
    if (!choice) {
      if (!why_stop.text.empty())
        Decide("workers", "No worker count could be measured: " + why_stop.text + ".", ids);
      return;
    }
    const int64_t before = current_.count(k.name) ? current_.at(k.name).get<int64_t>() : -1;
    current_[k.name] = *choice;
    const Trial* chosen = seen.at(*choice);
    if (recheck && *choice == before) return;

    const double rate = chosen->samples_per_s;
    const std::string workers = fmt::format("{} worker{}", *choice, *choice == 1 ? "" : "s");
    std::string text;
    if (ceiling > 0 && rate >= Need(*choice, ceiling)) {
      text = *choice == 0
                 ? fmt::format("0 workers suffice: the main process alone loads {}, {} the compute ceiling of {}, "
                               "so loading in line with each step costs under {}",
                               Rate(rate), Times(rate / ceiling), Rate(ceiling), Percent(o_.loader_margin))
                 : fmt::format("{} unblock{} {}: the loader alone then delivers {} against a compute ceiling of {}",
                               workers, *choice == 1 ? "s" : "", Engine(), Rate(rate), Rate(ceiling));
      if (recheck) text = fmt::format("With the new settings the compute ceiling is {}; {}", Rate(ceiling), text);
      text += MoreWorkersClause(*choice, seen);
    } else if (ceiling > 0 && rate >= ceiling) {
      text = fmt::format("{} {} the best this range gives: the loader alone then delivers {}, above the compute "
                         "ceiling of {} but short of the {} margin, so {} may still wait for data at times",
                         workers, *choice == 1 ? "is" : "are", Rate(rate), Rate(ceiling), Percent(o_.loader_margin),
                         Engine());
      if (why_stop.level > *choice) text += "; " + why_stop.text;
    } else if (ceiling > 0) {
      text = fmt::format("No worker count lets the loader keep up with the compute ceiling of {}: {} promise{} the "
                         "most ({} in training; the loader alone delivers {}); loading stays the bottleneck "
                         "(preloading, cheaper transforms or more CPU cores would help)",
                         Rate(ceiling), workers, *choice == 1 ? "s" : "", Rate(Promised(*choice, rate, ceiling)),
                         Rate(rate));
      if (why_stop.level > *choice) text += "; " + why_stop.text;
    } else {
      text = fmt::format("{} give{} the best throughput ({}){}", workers, *choice == 1 ? "s" : "", Rate(rate),
                         seen.size() > 1 ? " within " + Percent(o_.tolerance) + " of any other count" : "");
      if (why_stop.level > *choice) text += "; " + why_stop.text;
    }
    Decide("workers", text + ".", ids);
  }

  // "; more add RAM, not speed" when more workers were measured.
  std::string MoreWorkersClause(int64_t choice, const std::map<int64_t, const Trial*>& seen) const {
    const Trial* chosen = seen.at(choice);
    const Trial* most = nullptr;
    for (const auto& [w, t] : seen)
      if (w > choice && Succeeded(*t)) most = t;
    if (!most) return "";
    if (chosen->rss_peak_bytes && most->rss_peak_bytes && *most->rss_peak_bytes > *chosen->rss_peak_bytes)
      return fmt::format("; more add RAM ({} more at {}), not speed", Bytes(*most->rss_peak_bytes - *chosen->rss_peak_bytes),
                         most->request.knobs.at(FindRole(o_.knobs, KnobRole::kWorkers)->name).get<int64_t>());
    return "; more add nothing";
  }

  // ---- 3. mixed precision -------------------------------------------------------------------------------------

  void Amp() {
    const KnobSpec* k = Exposed(KnobRole::kAmp);
    if (out_.failed || out_.stopped || !k) return;
    const KnobValue now = current_.count(k->name) ? current_.at(k->name) : KnobValue(k->choices.front());
    const Trial* base = Measure(ComputeMode(), current_, "amp");
    if (!base) return;
    const Trial* best = Succeeded(*base) ? base : nullptr;
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
      if (!best || t->samples_per_s > best->samples_per_s) best = t;
    }
    if (out_.stopped && ids.size() == 1) return;
    std::string text;
    if (best && best != base && (!Succeeded(*base) || best->samples_per_s >= base->samples_per_s * (1 + o_.gain))) {
      const KnobValue& v = best->request.knobs.at(k->name);
      current_[k->name] = v;
      text = Succeeded(*base)
                 ? fmt::format("{}={} runs the model at {}, {} {}={}: adopted", k->name, ValueText(v),
                               Rate(best->samples_per_s), Times(best->samples_per_s / base->samples_per_s),
                               k->name, ValueText(now))
                 : fmt::format("{}={} runs the model at {} where {}={} did not run: adopted", k->name, ValueText(v),
                               Rate(best->samples_per_s), k->name, ValueText(now));
    } else if (best && best != base) {
      text = fmt::format("Mixed precision does not pay here: {}={} gives {} against {} with {}={}; left at {}",
                         k->name, ValueText(best->request.knobs.at(k->name)), Rate(best->samples_per_s),
                         Rate(base->samples_per_s), k->name, ValueText(now), ValueText(now));
    } else if (best && failures.size() + 1 == ids.size()) {
      text = fmt::format("{}={} stays ({}): every other choice failed", k->name, ValueText(now),
                         Rate(base->samples_per_s));
    } else if (best) {
      text = fmt::format("{}={} stays: no other choice ran faster ({})", k->name, ValueText(now),
                         Rate(base->samples_per_s));
    } else {
      text = fmt::format("No {} choice ran", k->name);
    }
    for (const auto& f : failures) text += "; " + f;
    Decide("amp", text + ".", ids);
  }

  // ---- 4. batch size ------------------------------------------------------------------------------------------

  void Batch() {
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
                           Percent(*MemoryShare(t)), t.mem_is_gpu ? "GPU's" : "host's", Percent(o_.mem_target));
      return fmt::format("{} {}", b, FailureText(t));
    };

    int64_t start = std::clamp(current_.count(name) ? current_.at(name).get<int64_t>() : k->Start().get<int64_t>(),
                               k->lo, k->hi);
    std::optional<int64_t> ok, bad;
    std::string boundary;  // why the search stopped growing
    bool memory_bound = false;

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
    // Grow by doubling until out of memory, over the target, a failure, or the end of the range.
    while (!bad && *ok < k->hi) {
      int64_t next = std::min(k->hi, *ok * 2);
      const Trial* t = measure(next);
      if (!t) break;
      if (Fits(*t)) {
        ok = next;
        continue;
      }
      // Out of memory may be fragmentation: the allocator's expandable segments get one chance.
      if (OutOfMemory(*t) && alloc && ValueText(current_.at(alloc->name)) != "on") {
        const Trial* retry = Measure(ComputeMode(), [&] {
          KnobValues v = With(name, next);
          v[alloc->name] = "on";
          return v;
        }(), "batch");
        if (!retry) break;
        ids.push_back(retry->id);
        if (Fits(*retry)) {
          current_[alloc->name] = "on";
          points[next] = retry;
          ok = next;
          Decide("batch", fmt::format("Batch {} ran out of memory, and fits with {}={}: adopted.", next,
                                      kAllocatorVar, kAllocatorOn),
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
      std::vector<Point> pts;
      for (const auto& [b, t] : points)
        if (b <= *ok && Fits(*t)) pts.push_back({b, t->samples_per_s});
      return pts;
    };
    std::optional<int64_t> fastest = Fastest(fitting());
    std::optional<int64_t> recommended = SmallestWithin(fitting(), o_.tolerance);
    // Smaller batches than any measured may be as fast: halve while they stay within the tolerance.
    while (recommended && *recommended == fitting().front().x && *recommended / 2 >= k->lo && !out_.stopped) {
      const Trial* t = measure(*recommended / 2);
      if (!t || !Fits(*t)) break;
      std::optional<int64_t> again = SmallestWithin(fitting(), o_.tolerance);
      if (again == recommended) break;
      recommended = again;
    }
    fastest = Fastest(fitting());

    largest_batch_ = *ok;
    fastest_batch_ = fastest;
    current_[name] = *recommended;
    out_.recommended_batch_trial = points.at(*recommended)->id;
    out_.fastest_batch_trial = points.at(*fastest)->id;
    for (const auto& [b, t] : points) out_.batch_curve.push_back(t->id);

    std::string limit =
        !bad            ? fmt::format("Batch {} is the end of the range ({}) and fits", *ok, k->RangeText())
        : memory_bound ? fmt::format("Batch {} is the largest that fits: {}", *ok, boundary)
                       : fmt::format("Batch {} is the largest that ran: {}, not for lack of memory, so the search "
                                     "stops there",
                                     *ok, boundary);
    const Trial* fast = points.at(*fastest);
    const Trial* rec = points.at(*recommended);
    std::string pick =
        *recommended == *fastest
            ? fmt::format("the fastest, {} ({}), is recommended: every smaller batch is more than {} slower",
                          *fastest, Rate(fast->samples_per_s), Percent(o_.tolerance))
            : fmt::format("the fastest is {} ({}); {} is within {} of it ({}) and is recommended: smaller batches "
                          "generalise better",
                          *fastest, Rate(fast->samples_per_s), *recommended, Percent(o_.tolerance),
                          Rate(rec->samples_per_s));
    Decide("batch", limit + "; " + pick + ".", ids);
    if (*recommended < kSmallBatch)
      out_.warnings.push_back(fmt::format("batch {} per device is below {}: batch-norm statistics get noisy and {} "
                                          "is poorly used",
                                          *recommended, kSmallBatch, o_.gpu ? "the GPU" : "the hardware"));

    // A larger batch or mixed precision lifts the compute ceiling: the loader must still keep up.
    const KnobSpec* workers = Exposed(KnobRole::kWorkers);
    const Trial* ceiling = Find(out_.compute_ceiling_trial);
    if (workers && out_.helper && ceiling && rec->samples_per_s > ceiling->samples_per_s)
      ChooseWorkers(*workers, rec->samples_per_s, true);
  }

  // ---- 5. full training ---------------------------------------------------------------------------------------

  void Full() {
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
        if (!t) return;
        ids.push_back(t->id);
        if (!Succeeded(*t)) failures.push_back(fmt::format("{}={} {}", k.name, ValueText(v), FailureText(*t)));
        else if (!winner || t->samples_per_s > winner->samples_per_s) winner = t;
      }
      std::string text;
      if (winner && winner->samples_per_s >= best->samples_per_s * (1 + o_.gain)) {
        const KnobValue& v = winner->request.knobs.at(k.name);
        text = fmt::format("{}={} speeds full training up by {} ({} against {}): adopted", k.name, ValueText(v),
                           Percent(winner->samples_per_s / best->samples_per_s - 1), Rate(winner->samples_per_s),
                           Rate(best->samples_per_s));
        current_[k.name] = v;
        best = winner;
      } else if (winner) {
        text = fmt::format("{}={} brings nothing in full training ({} against {}); {} stays {}", k.name,
                           ValueText(winner->request.knobs.at(k.name)), Rate(winner->samples_per_s),
                           Rate(best->samples_per_s), k.name, ValueText(now));
      } else if (ids.size() == 1) {
        continue;
      } else {
        text = fmt::format("{} stays {}", k.name, ValueText(now));
      }
      for (const auto& f : failures) text += "; " + f;
      Decide("full", text + ".", ids);
    }
  }

  // Workers were chosen from loader-only runs against a compute ceiling measured alone. When the model and the
  // loader share the CPU (training on the CPU, or a busy host), that overlap does not happen, so the choice is
  // checked against the script's own count in full training; the fewer workers win a tie. Returns the faster
  // full-training trial (null once the search stopped).
  const Trial* ConfirmWorkers(const Trial* current) {
    const KnobSpec* k = Exposed(KnobRole::kWorkers);
    if (!k || !out_.baseline.count(k->name) || current_.at(k->name) == out_.baseline.at(k->name)) return current;
    const KnobValue chosen = current_.at(k->name), own = out_.baseline.at(k->name);
    const Trial* t = Measure(StageKind::kFull, With(k->name, own), "full");
    if (!t) return nullptr;
    const bool fewer = own.get<int64_t>() < chosen.get<int64_t>();
    const double ratio = Succeeded(*t) ? t->samples_per_s / current->samples_per_s : 0;
    if (ratio >= 1 + o_.gain || (fewer && ratio >= 1 - o_.tolerance)) {
      current_[k->name] = own;
      Decide("full", fmt::format("In full training the script's own {}={} runs at {} against {} with {}={}: the "
                                 "loader and the model share the CPU here, so {} stays {}.",
                                 k->name, ValueText(own), Rate(t->samples_per_s), Rate(current->samples_per_s),
                                 k->name, ValueText(chosen), k->name, ValueText(own)),
             {current->id, t->id});
      return t;
    }
    Decide("full", fmt::format("In full training {}={} holds: {} against {} with the script's own {}.", k->name,
                               ValueText(chosen), Rate(current->samples_per_s),
                               Succeeded(*t) ? Rate(t->samples_per_s) : FailureText(*t), ValueText(own)),
           {current->id, t->id});
    return current;
  }

  // ---- 6. confirmation ----------------------------------------------------------------------------------------

  void Confirm() {
    if (out_.failed || out_.stopped) return;
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
    double speedup = base && base->samples_per_s > 0 ? t->samples_per_s / base->samples_per_s : 0;
    std::string text =
        speedup >= 1 + o_.gain
            ? fmt::format("Confirmed: the recommendation trains at {}, {} the baseline's {}.", Rate(t->samples_per_s),
                          Times(speedup), Rate(base->samples_per_s))
            : fmt::format("Confirmed at {}; the baseline's {} was already about as fast: the script's own settings "
                          "were good.",
                          Rate(t->samples_per_s), base ? Rate(base->samples_per_s) : std::string("?"));
    Decide("confirm", text, {base ? base->id : t->id, t->id});
  }

  // ---- grid ---------------------------------------------------------------------------------------------------

  void Grid() {
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
    std::vector<int> ids;
    for (const auto& p : points) {
      const Trial* t = Measure(StageKind::kFull, p, "grid");
      if (!t) break;
      ids.push_back(t->id);
      if (Succeeded(*t) && (!best || t->samples_per_s > best->samples_per_s)) best = t;
    }
    if (!best) return;
    current_ = best->request.knobs;
    out_.confirm_trial = best->id;
    Decide("grid", fmt::format("The best of {} grid points is {}: {}.", ids.size(), ValuesText(current_, KnobOrder()),
                               Rate(best->samples_per_s)),
           ids);
  }

  // ---- conclusion ---------------------------------------------------------------------------------------------

  void Conclude() {
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
    if (out_.stopped)
      Decide("stop", "The search stopped early (budget or interrupt): the recommendation uses what was measured.");
  }

  const SearchOptions& o_;
  const TrialFn& fn_;
  SearchOutcome out_;
  std::deque<Trial> trials_;  // stable addresses for the pointers the steps hold
  KnobValues current_;        // the settings so far, every exposed knob set once the baseline ran
  KnobValues worker_base_;    // the settings the worker scan varies workers in
  std::optional<int64_t> largest_batch_, fastest_batch_;
};

}  // namespace

SearchOutcome RunSearch(const SearchOptions& options, const TrialFn& run_trial) {
  return Search(options, run_trial).Run();
}

}  // namespace sat::tune
