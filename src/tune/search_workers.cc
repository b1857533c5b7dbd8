// Step 2 of the guided search: the DataLoader's worker count, from loader-only runs against the compute ceiling.
#include <fmt/core.h>

#include <algorithm>

#include "tune/compare.h"
#include "tune/levels.h"
#include "tune/search_internal.h"
#include "util/strings.h"

namespace sat::tune::internal {

namespace {

// A worker count must add this much loader throughput over fewer workers to count as progress.
constexpr double kWorkerStep = 0.05;

}  // namespace

// What the loader alone must deliver at `w` workers for the model never to wait. With workers, loading overlaps
// the model: the loader must clear the ceiling by the margin. With none, loading runs in line with every step:
// training stays within the margin of the ceiling only when loading takes under that share, L >= C / margin.
double Search::Need(int64_t w, double ceiling) const {
  return w == 0 ? ceiling / o_.loader_margin : ceiling * (1 + o_.loader_margin);
}

// The training throughput a loader rate promises at `w` workers: in line (no workers) the times per sample
// add; with workers the slower side sets the pace.
double Search::Promised(int64_t w, double loader, double ceiling) const {
  if (ceiling <= 0) return loader;
  return w == 0 ? 1 / (1 / loader + 1 / ceiling) : std::min(loader, ceiling);
}

// The loader at `w` workers keeps the model fed: it delivers what the ceiling needs, and is distinguishably
// faster than the ceiling.
bool Search::Clears(int64_t w, const Trial& loader, const Trial* ceiling) const {
  return ceiling && Reliable(loader) && loader.samples_per_s >= Need(w, ceiling->samples_per_s) &&
         Compare(loader, *ceiling) == Order::kFaster;
}

// Scans worker counts from the bottom until the loader clears what the `ceiling` needs (null: no ceiling known,
// scan until more workers stop helping) and returns the chosen count; nullopt when no count could be chosen
// (`why_stop` then says why).
std::optional<int64_t> Search::ScanWorkers(const KnobSpec& k, const Trial* ceiling,
                                           std::map<int64_t, const Trial*>& seen, ScanStop* why_stop) {
  auto measure = [&](int64_t w) {
    KnobValues v = worker_base_;
    v[k.name] = w;
    const Trial* t = Measure(LoaderMode(), v, "workers");
    if (t) seen[w] = t;
    return t;
  };
  std::optional<int64_t> clearing, below;
  std::optional<int64_t> no_gain;  // the level that added nothing that counts over fewer workers
  const Trial* best = nullptr;
  for (int64_t w : DoublingLevels(k.lo, k.hi)) {
    const Trial* t = measure(w);
    if (!t) break;
    if (!Succeeded(*t)) {
      *why_stop = {w, fmt::format("{} workers {}", w, FailureText(*t))};
      break;
    }
    if (Clears(w, *t, ceiling)) {
      clearing = w;
      break;
    }
    // One worker only moves loading out of the main process; from two on, each level must add throughput.
    if (w >= 2 && best && !FasterBy(*t, *best, kWorkerStep)) {
      no_gain = w;
      *why_stop = {w, Compare(*t, *best) == Order::kNotDistinguishable
                          ? fmt::format("{} workers are {}", w, NotDistinguishable(*t, *best, "from fewer"))
                          : fmt::format("{} workers add less than {} over fewer", w, FormatShare(kWorkerStep))};
      break;
    }
    if (!best || t->samples_per_s > best->samples_per_s) best = t;
    below = w;
  }
  // The fewest clearing workers lie between the last level below the need and the first above it.
  if (clearing && below) {
    int64_t lo = *below, hi = *clearing;
    while (auto mid = BisectMidpoint(lo, hi, 1)) {
      const Trial* t = measure(*mid);
      if (!t) break;
      if (Clears(*mid, *t, ceiling)) hi = *mid;
      else lo = *mid;
    }
    clearing = hi;
  }
  if (clearing) return clearing;
  // Nothing clears: the fewest workers within the tolerance of the most promising count, among the measurements
  // that count (full training then checks the choice against the script's own count).
  std::vector<Point> points;
  for (const auto& [w, t] : seen)
    if (Reliable(*t) && w != no_gain)
      points.push_back({w, Promised(w, t->samples_per_s, ceiling ? ceiling->samples_per_s : 0)});
  if (auto choice = SmallestWithin(points, o_.tolerance)) return choice;
  if (!seen.empty() && why_stop->text.empty()) {
    std::string reasons;
    for (const auto& [w, t] : seen)
      if (Succeeded(*t))
        reasons += fmt::format("{}the run with {} workers {}", reasons.empty() ? "" : "; ", w, UnreliableWhy(*t));
    *why_stop = {-1, "no loader measurement counts (" + reasons + ")"};
  }
  return std::nullopt;
}

void Search::Workers() {
  StepScope scope(this, "workers");
  const KnobSpec* k = Exposed(KnobRole::kWorkers);
  if (out_.failed || out_.stopped || !k) return;
  worker_base_ = current_;
  workers_chosen_ = true;
  const Trial* compute = Pipe(Find(out_.compute_ceiling_trial));
  // After the batch step (a loader that kept up), the ceiling is the one mixed precision and the batch raised.
  if (const Trial* rec = Pipe(Find(out_.recommended_batch_trial));
      rec && compute && Succeeded(*compute) && Compare(*rec, *compute) == Order::kFaster)
    compute = rec;
  ChooseWorkers(*k, compute && Succeeded(*compute) ? compute : nullptr, false);
}

// Chooses the worker count against a compute-mode trial (null: none known) and says why.
void Search::ChooseWorkers(const KnobSpec& k, const Trial* ceiling, bool recheck) {
  std::map<int64_t, const Trial*> seen;
  ScanStop why_stop;
  std::optional<int64_t> choice = ScanWorkers(k, ceiling, seen, &why_stop);
  std::vector<int> ids;
  for (const auto& [w, t] : seen) ids.push_back(t->id);
  if (!choice) {
    if (!why_stop.text.empty())
      Decide("workers",
             fmt::format("No worker count was chosen: {}; {} stays {}.", why_stop.text, k.name,
                         current_.count(k.name) ? ValueText(current_.at(k.name)) : std::string("the script's own")),
             ids);
    return;
  }
  const int64_t before = current_.count(k.name) ? current_.at(k.name).get<int64_t>() : -1;
  current_[k.name] = *choice;
  const Trial* chosen = seen.at(*choice);
  if (recheck && *choice == before) return;

  const double rate = chosen->samples_per_s;
  const std::string workers = fmt::format("{} worker{}", *choice, *choice == 1 ? "" : "s");
  const std::string stop = why_stop.level > *choice ? "; " + why_stop.text : "";
  std::string text;
  if (ceiling && Clears(*choice, *chosen, ceiling)) {
    const double c = ceiling->samples_per_s;
    text = *choice == 0
               ? fmt::format("0 workers suffice: the main process alone loads {}, {} the compute ceiling of {}, "
                             "so loading in line with each step costs under {}",
                             RateWithInterval(*chosen), FormatTimes(rate / c), RateWithInterval(*ceiling),
                             FormatShare(o_.loader_margin))
               : fmt::format("{} unblock{} {}: the loader alone then delivers {} against a compute ceiling of {}",
                             workers, *choice == 1 ? "s" : "", Engine(), RateWithInterval(*chosen),
                             RateWithInterval(*ceiling));
    if (recheck) text = fmt::format("With the new settings the compute ceiling is {}; {}", FormatRate(c), text);
    text += MoreWorkersClause(*choice, seen);
  } else if (ceiling && Compare(*chosen, *ceiling) == Order::kFaster) {
    text = fmt::format("{} {} the best this range gives: the loader alone then delivers {}, above the compute "
                       "ceiling of {} but short of the {} margin, so {} may still wait for data at times{}",
                       workers, *choice == 1 ? "is" : "are", RateWithInterval(*chosen), RateWithInterval(*ceiling),
                       FormatShare(o_.loader_margin), Engine(), stop);
  } else if (ceiling && Compare(*chosen, *ceiling) == Order::kSlower) {
    text = fmt::format("No worker count lets the loader keep up with the compute ceiling of {}: {} promise{} the "
                       "most ({} in training; the loader alone delivers {}); loading stays the bottleneck "
                       "(preloading, cheaper transforms or more CPU cores would help){}",
                       RateWithInterval(*ceiling), workers, *choice == 1 ? "s" : "",
                       FormatRate(Promised(*choice, rate, ceiling->samples_per_s)), RateWithInterval(*chosen), stop);
  } else if (ceiling) {
    text = fmt::format("{} {} the fewest within {} of the most the loader gives; whether it keeps up with the "
                       "compute ceiling cannot be said: the loader is {}{}",
                       workers, *choice == 1 ? "is" : "are", FormatShare(o_.tolerance),
                       NotDistinguishable(*chosen, *ceiling, "from the ceiling"), stop);
  } else {
    text = fmt::format("{} give{} {}{}{}", workers, *choice == 1 ? "s" : "", RateWithInterval(*chosen),
                       seen.size() > 1 ? fmt::format(", the fewest within {} of the fastest count by its estimate",
                                                     FormatShare(o_.tolerance))
                                       : "",
                       stop);
  }
  Decide("workers", text + ".", ids);
}

// "; more add RAM, not speed" when more workers were measured.
std::string Search::MoreWorkersClause(int64_t choice, const std::map<int64_t, const Trial*>& seen) const {
  const Trial* chosen = seen.at(choice);
  const Trial* most = nullptr;
  for (const auto& [w, t] : seen)
    if (w > choice && Succeeded(*t)) most = t;
  if (!most) return "";
  if (chosen->rss_peak_bytes && most->rss_peak_bytes && *most->rss_peak_bytes > *chosen->rss_peak_bytes)
    return fmt::format("; more add RAM ({} more at {}), not speed",
                       FormatBytes(*most->rss_peak_bytes - *chosen->rss_peak_bytes),
                       most->request.knobs.at(FindRole(o_.knobs, KnobRole::kWorkers)->name).get<int64_t>());
  return "; more add nothing";
}

}  // namespace sat::tune::internal
