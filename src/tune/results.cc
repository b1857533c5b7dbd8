#include "tune/results.h"

#include <fmt/core.h>

#include <cstring>
#include <filesystem>

#include "tune/compare.h"
#include "tune/flops.h"
#include "tune/global_batch.h"
#include "tune/html_report.h"
#include "util/atomic_file.h"
#include "util/json_text.h"
#include "util/redact.h"

namespace sat::tune {

using nlohmann::json;

namespace {

std::string_view RoleName(KnobRole r) {
  switch (r) {
    case KnobRole::kWorkers: return "workers";
    case KnobRole::kAmp: return "amp";
    case KnobRole::kBatchSize: return "batch_size";
    case KnobRole::kAllocator: return "allocator";
    case KnobRole::kPinMemory: return "pin_memory";
    case KnobRole::kPreload: return "preload";
    case KnobRole::kOther: return "other";
  }
  return "other";
}

json ValuesOrNull(const KnobValues& v) { return v.empty() ? json(nullptr) : json(v); }

json GlobalBatchJson(const SearchOutcome& s) {
  std::optional<GlobalBatch> b = RecommendedGlobalBatch(s);
  if (!b) return nullptr;
  return {{"knob", b->knob}, {"per_device", b->per_device}, {"world_size", b->world_size}, {"global", b->global}};
}

json RateOf(const SearchOutcome& s, std::optional<int> id) {
  const Trial* t = s.FindTrial(id);
  return t && Succeeded(*t) ? json(t->samples_per_s) : json(nullptr);
}

template <class T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// The energy of a trial that measured (the GPU's, or without one the CPUs'): {joules_per_sample, samples_per_kwh, watts, method}; null without one.
json EnergyOf(const SearchOutcome& s, std::optional<int> id) {
  const Trial* t = s.FindTrial(id);
  if (!t || !Succeeded(*t) || !t->joules_per_sample || *t->joules_per_sample <= 0) return nullptr;
  return {{"joules_per_sample", *t->joules_per_sample},
          {"samples_per_kwh", 3.6e6 / *t->joules_per_sample},
          {"watts", OrNull(t->watts)},
          {"method", t->energy_method}};
}

// A CSV cell: quoted when it holds a comma, a quote or a line break.
std::string Cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string Num(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

}  // namespace

json ResultsJson(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  json knobs = json::array();
  for (const auto& k : s.knobs) {
    knobs.push_back({{"name", k.spec.name},
                     {"kind", KindName(k.spec.kind)},
                     {"range", k.spec.RangeText()},
                     {"role", RoleName(k.spec.role)},
                     {"delivery", DeliveryName(k.spec.delivery)},
                     {"exposed", k.exposed},
                     {"script_value", k.script_value ? *k.script_value : json(nullptr)},
                     {"flag", k.spec.flag ? json(k.spec.flag->option) : json(nullptr)},
                     {"flag_proof", k.spec.flag_proof},
                     {"note", k.note}});
  }
  json decisions = json::array();
  for (const auto& d : s.decisions) decisions.push_back({{"step", d.step}, {"text", d.text}, {"trials", d.trials}});
  json trials = json::array();
  for (const auto& t : s.trials) {
    json trial = TrialToJson(t);
    trial["flops_rate"] = core::FlopsReadingJson(TrialFlops(t, r.machine));
    trials.push_back(std::move(trial));
  }
  json changes = json::array();
  for (const auto& c : r.code_changes)
    changes.push_back({{"knobs", c.knobs}, {"where", c.where}, {"code", c.code}, {"text", c.Text()}});
  // The recommendation against the baseline, as a claim only when the two are distinguishable.
  json speedup = {{"ratio", nullptr}, {"claim", nullptr}};
  const Trial* confirm = s.FindTrial(s.confirm_trial);
  const Trial* base = s.ClaimBase();
  if (confirm && base && confirm != base && Succeeded(*confirm) && Succeeded(*base)) {
    std::optional<double> ratio = RatioIfDistinguishable(*confirm, *base);
    speedup["ratio"] = ratio ? json(*ratio) : json(nullptr);
    const ObjectiveWords words = WordsFor(r.objective);
    speedup["claim"] = !ratio ? "not distinguishable" : *ratio > 1 ? words.better : words.worse;
  }
  const core::Machine& m = r.machine;
  return {
      {"version", 1},
      {"command", RedactCommand(r.command, r.shell)},
      {"shell", r.shell},
      {"strategy", StrategyName(r.strategy)},
      {"objective", ObjectiveName(r.objective)},
      {"machine",
       {{"hostname", m.hostname},
        {"cpu_model", m.cpu_model},
        {"cpu_count", m.cpu_count},
        {"usable_cores", m.usable_cores},
        {"mem_total_bytes", OrNull(m.mem_total_bytes)},
        {"gpu_index", m.gpu_index},
        {"gpu_name", m.gpu_name},
        {"gpu_mem_total_bytes", OrNull(m.gpu_mem_total_bytes)}}},
      {"budget_s", r.budget_s},
      {"wall_s", r.wall_s},
      {"interrupted", r.interrupted},
      {"budget_spent", r.budget_spent},
      {"stop_reason", r.stop_reason},
      {"helper", s.helper},
      {"knobs", knobs},
      {"baseline", ValuesOrNull(s.baseline)},
      {"recommended", ValuesOrNull(s.recommended)},
      {"fastest", ValuesOrNull(s.fastest)},
      {"largest_fitting", ValuesOrNull(s.largest_fitting)},
      {"largest_batch_tried", s.largest_batch_tried ? nlohmann::json(*s.largest_batch_tried) : nlohmann::json()},
      {"plan", s.plan.empty() ? nlohmann::json() : nlohmann::json(s.plan)},
      {"throughput",
       {{"baseline", RateOf(s, s.baseline_trial)},
        {"baseline_again", RateOf(s, s.baseline_again_trial)},
        {"recommended", RateOf(s, s.confirm_trial)},
        {"loader_ceiling", RateOf(s, s.loader_ceiling_trial)},
        {"compute_ceiling", RateOf(s, s.compute_ceiling_trial)},
        {"recommended_compute", RateOf(s, s.recommended_batch_trial)},
        {"fastest_compute", RateOf(s, s.fastest_batch_trial)}}},
      {"speedup", speedup},
      {"energy", {{"baseline", EnergyOf(s, s.baseline_trial)}, {"recommended", EnergyOf(s, s.confirm_trial)}}},
      {"cost", CostJson(r)},
      {"flops", FlopsJson(r)},
      {"trace", core::TraceOutcomeJson(r.trace)},
      {"auto", s.trials.empty() ? false : s.trials.front().auto_seen},
      {"loader", s.loader_key.empty() ? json(nullptr) : json({{"key", s.loader_key}, {"site", s.loader_site}})},
      {"injected", s.injected},
      {"from_flags", FlagSources(s)},
      {"code_changes", changes},
      {"recommended_command", RedactCommandLine(r.recommended_command)},
      {"global_batch", GlobalBatchJson(s)},
      {"fastest_command", RedactCommandLine(r.fastest_command)},
      {"needs",
       {{"cpu_cores", OrNull(r.needs.cpu_cores)},
        {"ram_bytes", OrNull(r.needs.ram_bytes)},
        {"cpu_pct_p95", OrNull(r.needs.cpu_pct_p95)},
        {"rss_peak_bytes", OrNull(r.needs.rss_peak_bytes)},
        {"loader_bound", r.needs.loader_bound},
        {"text", NeedsSentence(r.needs, m.gpu_index >= 0)}}},
      {"decisions", decisions},
      {"warnings", s.warnings},
      {"failure", s.failed ? json(s.failure) : json(nullptr)},
      {"trials_run", r.trials_run},
      {"trials_cached", r.trials_cached},
      {"cache", r.cache_path},
      {"trials", trials},
  };
}

std::string ResultsCsv(const TuneResult& r) {
  std::string out = "id,step,mode";
  for (const auto& k : r.search.knobs) out += "," + Cell(k.spec.name);
  out += ",cached,exit_class,samples_per_s,ci_low,ci_high,converged,counts,steady_steps,too_slow,warmup_s,"
         "wall_s,mem_peak_bytes,mem_total_bytes,gpu_util_pct,cpu_pct,rss_peak_bytes,flops_per_s,mfu\n";
  for (const auto& t : r.search.trials) {
    out += fmt::format("{},{},{}", t.id, Cell(t.request.step), core::StageName(t.request.mode));
    for (const auto& k : r.search.knobs) {
      const KnobValue* v = EffectiveKnob(t, k.spec.name);
      out += "," + (v ? Cell(ValueText(*v)) : std::string());
    }
    const core::FlopsReading flops = TrialFlops(t, r.machine);
    out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", t.cached ? 1 : 0,
                       run::ExitClassName(t.exit_class), t.samples_per_s, t.ci_low, t.ci_high, t.converged ? 1 : 0,
                       Reliable(t) ? 1 : 0, t.steady_steps, t.too_slow ? 1 : 0, t.warmup_s, t.wall_s,
                       Num(t.mem_peak_bytes), Num(t.mem_total_bytes), Num(t.gpu_util_pct), Num(t.cpu_pct),
                       Num(t.rss_peak_bytes), Num(flops.flops_per_s), Num(flops.mfu));
  }
  return out;
}

Status WriteOutputs(const TuneResult& r, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir, ec.message())};
  if (Status st = WriteFileAtomically(fs::path(dir) / "results.json", JsonText(ResultsJson(r), 2) + "\n"); !st) return st;
  if (Status st = WriteFileAtomically(fs::path(dir) / "results.csv", ResultsCsv(r)); !st) return st;
  return WriteFileAtomically(fs::path(dir) / "report.html", HtmlReport(r));
}

}  // namespace sat::tune
