#include "tune/console.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "tune/compare.h"
#include "tune/flops.h"
#include "tune/global_batch.h"
#include "util/strings.h"
#include "util/text_table.h"

namespace sat::tune {
namespace {

std::string Duration(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

std::string Settings(const Trial& t, const std::vector<std::string>& order) {
  if (!t.request.knobs.empty()) {
    // Knobs the script reported but the trial left at their defaults are shown too.
    KnobValues all = t.knobs_seen;
    for (const auto& [k, v] : t.request.knobs) all[k] = v;
    return ValuesText(all, order);
  }
  if (t.knobs_seen.empty()) return "(the script's defaults)";
  return ValuesText(t.knobs_seen, order) + " (defaults)";
}

std::string RateOf(const SearchOutcome& s, std::optional<int> id) {
  const Trial* t = s.FindTrial(id);
  return t && Succeeded(*t) ? FormatRate(t->samples_per_s) : std::string();
}

}  // namespace

std::string FastestTie(const SearchOutcome& s) {
  const Trial* fast = s.FindTrial(s.fastest_batch_trial);
  const Trial* rec = s.FindTrial(s.recommended_batch_trial);
  if (!fast || !rec || fast == rec || Compare(*fast, *rec) != Order::kNotDistinguishable) return "";
  return "; not distinguishable from the recommended batch";
}

std::string InjectedText(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  if (s.injected.empty()) return "";
  std::string names;
  for (const auto& n : s.injected) names += (names.empty() ? "" : ", ") + n;
  std::string o = fmt::format("Injected by saturate (the script has no flag for them): {}.", names);
  if (r.code_changes.empty()) return o + " The recommendation keeps the script's own values: no code change.\n";
  o += " The command above runs without them; to keep them, change the script:\n";
  for (const auto& c : r.code_changes) o += "  - " + c.Text() + "\n";
  return o;
}

std::string LargestBatchText(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  if (!s.largest_fitting.empty()) return ValuesText(s.largest_fitting, KnobOrder(r));
  if (s.largest_batch_tried)
    return fmt::format("not reached (the climb stopped at batch {}, which fits)", *s.largest_batch_tried);
  return "";
}

std::vector<std::string> KnobOrder(const TuneResult& r) {
  std::vector<std::string> order;
  for (const auto& k : r.search.knobs) order.push_back(k.spec.name);
  return order;
}

TrialRow MakeRow(const Trial& t, const std::vector<std::string>& order) {
  TrialRow row;
  row.id = t.id;
  row.step = t.request.step;
  row.mode = std::string(core::StageName(t.request.mode));
  row.settings = Settings(t, order);
  row.ok = Succeeded(t);
  row.rate = t.samples_per_s > 0 ? FormatNumber(t.samples_per_s) : "-";
  if (row.ok && t.ci_high > t.ci_low && t.samples_per_s > 0)
    row.interval = "±" + FormatShare((t.ci_high - t.ci_low) / 2 / t.samples_per_s);
  if (t.interrupted) row.result = "interrupted";
  else if (t.too_slow) row.result = "too slow to measure in this budget";
  else if (row.ok) row.result = t.converged ? "ok" : Reliable(t) ? "ok, not converged" : "ok, does not count";
  else if (!KnobNotApplied(t).empty()) row.result = "knob not applied";
  else row.result = std::string(run::ExitClassName(t.exit_class));
  if (row.ok && t.score && t.score->value > 0)
    row.result += fmt::format(", {} {}", FormatNumber(t.score->value), t.score->unit);
  if (t.cached) row.result += " (cached)";
  row.time = Duration(t.wall_s);
  return row;
}

std::vector<TrialRow> TrialRows(const TuneResult& r) {
  std::vector<TrialRow> rows;
  auto order = KnobOrder(r);
  for (const auto& t : r.search.trials) rows.push_back(MakeRow(t, order));
  return rows;
}

std::string ProgressLine(const TrialEvent& e) {
  const std::vector<std::string> order = e.knob_order ? *e.knob_order : std::vector<std::string>{};
  std::string what = fmt::format("trial {:>3}  {:<8} {:<7} {}", e.id, e.request->step, core::StageName(e.request->mode),
                                 e.request->knobs.empty() ? "(the script's defaults)" : ValuesText(e.request->knobs, order));
  if (e.started) return fmt::format("{}  (up to {})", what, Duration(e.trial_budget_s));
  TrialRow row = MakeRow(*e.trial, order);
  std::string line = fmt::format("{}  {} samples/s {} {} {}  [{} of {}]", what, row.rate, row.interval, row.result,
                                 row.time, Duration(e.elapsed_s), Duration(e.budget_s));
  if (!e.note.empty() && e.note != row.result) line += "  " + e.note;
  return line;
}

std::string ConsoleReport(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  auto order = KnobOrder(r);
  std::string objective;
  if (r.objective == Objective::kEnergy) objective = ", objective: the fewest joules per sample";
  if (r.objective == Objective::kCost) objective = ", objective: the least cost per sample";
  std::string o = fmt::format("saturate tune ({}{}): {} trial{} ({} run, {} from the cache) in {} of a {} budget{}\n\n",
                              StrategyName(r.strategy), objective, s.trials.size(), s.trials.size() == 1 ? "" : "s", r.trials_run,
                              r.trials_cached, Duration(r.wall_s), Duration(r.budget_s),
                              r.stop_reason.empty() ? "" : " (" + r.stop_reason + ")");

  // The trial table (util/text_table.h); the fixed columns keep their widths when their cells are narrower.
  using Align = TextColumn::Align;
  const std::vector<TextColumn> columns = {{Align::kRight, 3}, {Align::kLeft},      {Align::kLeft, 7},
                                           {Align::kLeft},     {Align::kRight, 10}, {Align::kRight, 6},
                                           {Align::kLeft},     {Align::kRight, 7}};
  std::vector<std::vector<std::string>> cells = {
      {"#", "step", "mode", "settings", "samples/s", "±95%", "result", "time"}};
  for (const auto& row : TrialRows(r)) {
    cells.push_back({std::to_string(row.id), row.step, row.mode, row.settings, row.rate, row.interval, row.result,
                     row.time});
  }
  o += TextTable(columns, cells);

  if (!s.decisions.empty()) {
    o += "\nWhy:\n";
    for (const auto& d : s.decisions) o += fmt::format("  - {}\n", d.text);
  }
  if (s.failed) {
    o += fmt::format("\nNo recommendation: {}.\n", s.failure);
  } else if (!s.recommended.empty()) {
    std::string confirmed = RateOf(s, s.confirm_trial);
    o += fmt::format("\nRecommended: {}{}\n", ValuesText(s.recommended, order),
                     confirmed.empty() ? "" : fmt::format("  ({} in full training)", confirmed));
    o += fmt::format("  {}\n", r.recommended_command);
    if (std::optional<GlobalBatch> batch = RecommendedGlobalBatch(s)) o += "  " + GlobalBatchText(*batch) + "\n";
    const std::vector<std::string> flags = FlagSources(s);
    if (!flags.empty()) {
      o += "Set with the script's own flags:\n";
      for (const auto& f : flags) o += "  - " + f + "\n";
    }
    if (std::string injected = InjectedText(r); !injected.empty()) o += injected;
    if (s.fastest != s.recommended)
      o += fmt::format("Fastest:     {}  ({} in compute mode{})\n", ValuesText(s.fastest, order),
                       RateOf(s, s.fastest_batch_trial), FastestTie(s));
    if (std::string largest = LargestBatchText(r); !largest.empty())
      o += fmt::format("Largest batch that fits: {}\n", largest);
  }
  if (std::string flops = FlopsLine(r); !flops.empty()) o += flops + "\n";
  if (std::string energy = EnergyLine(r); !energy.empty()) o += energy + "\n";
  if (std::string cost = CostLine(r); !cost.empty()) o += cost + "\n";
  o += WhatIfSection(r);
  if (r.trace) {
    for (const std::string& line : core::TraceOutcomeLines(*r.trace)) o += line + "\n";
  }
  if (std::string needs = NeedsSentence(r.needs, r.machine.gpu_index >= 0); !needs.empty()) o += needs + "\n";
  std::vector<std::string> notes;
  for (const auto& k : s.knobs)
    if (!k.exposed && !k.note.empty()) notes.push_back(fmt::format("{}: {}", k.spec.name, k.note));
  if (!notes.empty()) {
    o += "\nKnobs:\n";
    for (const auto& n : notes) o += "  - " + n + "\n";
  }
  if (!s.warnings.empty()) {
    o += "\nWarnings:\n";
    for (const auto& w : s.warnings) o += "  - " + w + "\n";
  }
  return o;
}

}  // namespace sat::tune
