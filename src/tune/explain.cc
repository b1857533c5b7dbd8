#include "tune/explain.h"

#include <fmt/core.h>

#include <cmath>

#include "util/strings.h"

namespace sat::tune {
namespace {

constexpr double kRamHeadroom = 1.25;
constexpr double kRamStep = 512.0 * 1024 * 1024;

const Trial* NeedsTrial(const SearchOutcome& s) {
  if (const Trial* t = s.FindTrial(s.confirm_trial); t && Succeeded(*t)) return t;
  const Trial* best = nullptr;
  for (const auto& t : s.trials) {
    if (t.request.mode != core::StageKind::kFull || !Succeeded(t)) continue;
    bool same = true;
    for (const auto& [name, v] : s.recommended) {
      auto it = t.request.knobs.find(name);
      if (it != t.request.knobs.end() && it->second != v) same = false;
    }
    if (same && (!best || t.samples_per_s > best->samples_per_s)) best = &t;
  }
  return best;
}

}  // namespace

Needs NeedsOf(const SearchOutcome& s) {
  Needs n;
  const Trial* t = NeedsTrial(s);
  if (!t) return n;
  n.trial = t->id;
  n.cpu_pct_p95 = t->cpu_pct_p95;
  n.rss_peak_bytes = t->rss_peak_bytes;
  if (t->cpu_pct_p95) n.cpu_cores = std::max(1, static_cast<int>(std::ceil(*t->cpu_pct_p95 / 100 - 0.05)));
  if (t->rss_peak_bytes) n.ram_bytes = std::ceil(*t->rss_peak_bytes * kRamHeadroom / kRamStep) * kRamStep;
  const Trial* compute = s.FindTrial(s.recommended_batch_trial);
  if (!compute) compute = s.FindTrial(s.compute_ceiling_trial);
  // The loader's throughput at the recommended worker count, from the worker scan.
  const Trial* loader = nullptr;
  for (const auto& k : s.knobs) {
    auto chosen = s.recommended.find(k.spec.name);
    if (k.spec.role != KnobRole::kWorkers || chosen == s.recommended.end()) continue;
    for (int id : s.loader_curve) {
      const Trial* l = s.FindTrial(id);
      auto w = l->request.knobs.find(k.spec.name);
      if (w != l->request.knobs.end() && w->second == chosen->second) loader = l;
    }
  }
  if (compute && loader && Succeeded(*compute) && Succeeded(*loader))
    n.loader_bound = loader->samples_per_s < compute->samples_per_s;
  return n;
}

std::string NeedsSentence(const Needs& n, bool gpu) {
  if (!n.cpu_cores && !n.ram_bytes) return "";
  std::string who = gpu ? "Per GPU, this configuration needs" : "This configuration needs";
  std::string cpu = n.cpu_cores ? fmt::format("{} CPU core{} ({} busy at p95)", *n.cpu_cores,
                                              *n.cpu_cores == 1 ? "" : "s", FormatNumber(*n.cpu_pct_p95 / 100))
                                : std::string("an unmeasured number of CPU cores");
  std::string ram = n.ram_bytes ? fmt::format("{} of RAM ({} peak + 25%)", FormatBytes(*n.ram_bytes),
                                              FormatBytes(*n.rss_peak_bytes))
                                : std::string("an unmeasured amount of RAM");
  std::string out = fmt::format("{} {} and {}.", who, cpu, ram);
  if (n.loader_bound)
    out += gpu ? " Loading still limits it: more CPU cores per GPU would raise throughput."
               : " Loading still limits it: more CPU cores would raise throughput.";
  return out;
}

}  // namespace sat::tune
