#include "tune/html_report.h"

#include <fmt/core.h>

#include <algorithm>

#include "tune/compare.h"
#include "tune/console.h"
#include "tune/flops.h"
#include "report/page.h"
#include "report/svg_chart.h"
#include "report/table.h"
#include "util/redact.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

constexpr const char* kBlue = "#2e6fbf";
constexpr const char* kOrange = "#e08a1e";
constexpr const char* kGreen = "#2a9d5b";
constexpr const char* kGrey = "#7f7f7f";

using report::Axis;
using report::Chart;
using report::Series;
using report::SeriesStyle;
using report::RenderSvg;

std::string Esc(const std::string& s) { return report::XmlEscape(s); }

const KnobSpec* ExposedRole(const SearchOutcome& s, KnobRole role) {
  for (const auto& k : s.knobs)
    if (k.spec.role == role && k.exposed) return &k.spec;
  return nullptr;
}

std::optional<double> IntKnob(const Trial& t, const std::string& name) {
  const KnobValue* v = EffectiveKnob(t, name);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::string FailLabel(const Trial& t) {
  if (t.exit_class == run::ExitClass::kGpuOom || t.exit_class == run::ExitClass::kHostOom) return "OOM";
  return std::string(run::ExitClassName(t.exit_class));
}

std::string WorkersChart(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  const KnobSpec* workers = ExposedRole(s, KnobRole::kWorkers);
  if (!workers || s.loader_curve.empty())
    return "<p class=\"sub\">No loader scan: the workers knob was not searched in loader-only mode.</p>\n";
  Chart c;
  c.title = "Loader throughput against workers";
  c.x.label = "DataLoader workers";
  c.x.integer = true;
  c.y.label = "samples/s";
  Series loader{"loader alone", kBlue, {}, SeriesStyle::kLinePoints};
  for (int id : s.loader_curve) {
    const Trial* t = s.FindTrial(id);
    auto w = IntKnob(*t, workers->name);
    if (!w) continue;
    if (Succeeded(*t)) loader.points.emplace_back(*w, t->samples_per_s);
    else c.failures.push_back({*w, FailLabel(*t)});
  }
  c.series.push_back(loader);
  if (const Trial* ceiling = s.FindTrial(s.compute_ceiling_trial))
    c.lines.push_back({ceiling->samples_per_s, "compute ceiling " + FormatNumber(ceiling->samples_per_s), kOrange});
  if (const Trial* rec = s.FindTrial(s.recommended_batch_trial); rec && Succeeded(*rec))
    c.lines.push_back(
        {rec->samples_per_s, "compute at the recommended settings " + FormatNumber(rec->samples_per_s), kGreen});
  return report::Figure(RenderSvg(c), "Each point is a loader-only trial (no model work). The loader keeps the model fed "
                              "once its line is above the compute ceiling; tune picks the fewest workers that clear "
                              "it with a margin.");
}

std::string BatchChart(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  const KnobSpec* batch = ExposedRole(s, KnobRole::kBatchSize);
  if (!batch || s.batch_curve.empty()) return "<p class=\"sub\">No batch-size search.</p>\n";
  Chart c;
  c.title = "Throughput against batch size";
  c.x.label = "batch size";
  c.x.log2 = true;
  c.y.label = s.helper ? "samples/s (compute mode)" : "samples/s";
  c.y2 = Axis{.label = "memory at peak, % of total", .min = 0.0, .max = 100.0};
  Series rate{"throughput", kBlue, {}, SeriesStyle::kLinePoints};
  Series mem{"memory at peak", kOrange, {}, SeriesStyle::kLinePoints, true, true};
  std::vector<std::pair<double, const Trial*>> points;
  for (int id : s.batch_curve) {
    const Trial* t = s.FindTrial(id);
    if (auto b = IntKnob(*t, batch->name)) points.emplace_back(*b, t);
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [b, t] : points) {
    if (!Succeeded(*t)) {
      c.failures.push_back({b, FailLabel(*t)});
      continue;
    }
    rate.points.emplace_back(b, t->samples_per_s);
    if (auto share = MemoryShare(*t)) mem.points.emplace_back(b, *share * 100);
  }
  c.series.push_back(rate);
  if (!mem.points.empty()) c.series.push_back(mem);
  c.lines.push_back({r.mem_target * 100, "memory target " + FormatShare(r.mem_target), kGrey, true});
  return report::Figure(RenderSvg(c), "Batch sizes tried by doubling, then bisecting the out-of-memory boundary. Crosses are "
                              "trials that failed. Memory is the GPU's when there is one, else the host's.");
}

std::string UtilisationChart(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  bool gpu = std::any_of(s.trials.begin(), s.trials.end(), [](const Trial& t) { return t.gpu_util_pct.has_value(); });
  Chart c;
  c.title = gpu ? "GPU utilisation beside throughput" : "CPU use beside throughput (no GPU)";
  c.width = 1120;
  c.x.label = "trial";
  c.y.label = "samples/s";
  c.y2 = Axis{.label = gpu ? "GPU utilisation %" : "CPU of the training processes, % of one core", .min = 0.0, .max = std::nullopt};
  if (gpu) c.y2->max = 100.0;
  Series rate{"throughput", kBlue, {}, SeriesStyle::kBars};
  Series util{gpu ? "GPU utilisation" : "CPU use", kOrange, {}, SeriesStyle::kPoints, true};
  for (const auto& t : s.trials) {
    c.x_labels.emplace_back(t.id, fmt::format("{}{}", t.id, core::StageName(t.request.mode).substr(0, 1)));
    rate.points.emplace_back(t.id, Succeeded(t) ? t.samples_per_s : 0);
    if (auto u = gpu ? t.gpu_util_pct : t.cpu_pct) util.points.emplace_back(t.id, *u);
    if (!Succeeded(t)) c.failures.push_back({static_cast<double>(t.id), FailLabel(t)});
  }
  c.series.push_back(rate);
  c.series.push_back(util);
  return report::Figure(RenderSvg(c), gpu ? "Per trial (l: loader, c: compute, f: full): throughput and the median GPU "
                                    "utilisation over its steady part."
                                  : "Per trial (l: loader, c: compute, f: full): throughput and the median CPU use of "
                                    "the training processes; GPU utilisation is N/A on this machine.");
}

std::string TimeCharts(const TuneResult& r) {
  std::string o = "<div class=\"small\">\n";
  auto order = KnobOrder(r);
  for (const auto& t : r.search.trials) {
    if (t.series.empty() || !Succeeded(t)) continue;
    Chart c;
    c.title = fmt::format("#{} {} {}", t.id, t.request.step, core::StageName(t.request.mode));
    c.width = 272;
    c.height = 160;
    c.x.label = "seconds";
    c.y.label = "samples/s";
    Series rate{"", kBlue, {}, SeriesStyle::kLine};
    for (const auto& p : t.series) rate.points.emplace_back(p.t_s, p.samples_per_s);
    c.series.push_back(rate);
    if (t.warmup_s > 0) c.bands.push_back({0, t.warmup_s, "warm-up", "#f6d7a7"});
    if (Succeeded(t)) c.lines.push_back({t.samples_per_s, FormatNumber(t.samples_per_s), kGreen});
    o += fmt::format("<figure title=\"{}\">{}</figure>\n", Esc(MakeRow(t, order).settings), RenderSvg(c));
  }
  return o + "</div>\n<p class=\"sub\">Throughput over time for each trial; the shaded start is the warm-up the "
             "estimator cut (MSER-5), the green line the steady-state estimate.</p>\n";
}

std::string Summary(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  auto order = KnobOrder(r);
  if (s.failed) return report::Box(fmt::format("<b>No recommendation:</b> {}.\n", Esc(s.failure)), true);
  std::string o;
  const Trial* confirm = s.FindTrial(s.confirm_trial);
  const Trial* base = s.ClaimBase();
  o += fmt::format("<p><b>Recommended:</b> {}", Esc(ValuesText(s.recommended, order)));
  if (confirm && Succeeded(*confirm)) {
    o += fmt::format(" — <b>{}</b> in full training", Esc(RateWithInterval(*confirm)));
    // A speed-up is claimed only when the two measurements can be told apart.
    if (base && base != confirm && Succeeded(*base)) {
      if (std::optional<double> ratio = RatioIfDistinguishable(*confirm, *base))
        o += fmt::format(", {} the baseline's {}", Esc(FormatTimes(*ratio)), Esc(RateWithInterval(*base)));
      else
        o += ", " + Esc(NotDistinguishable(*confirm, *base, "from the baseline"));
    }
  }
  o += ".</p>\n";
  o += report::CopyBlock(RedactCommandLine(r.recommended_command));
  if (const std::vector<std::string> flags = FlagSources(s); !flags.empty()) {
    o += "<p><b>Set with the script's own flags</b>:</p>\n<ul>\n";
    for (const auto& f : flags) o += fmt::format("<li>{}</li>\n", Esc(f));
    o += "</ul>\n";
  }
  if (!s.injected.empty()) {
    std::string names;
    for (const auto& n : s.injected) names += (names.empty() ? "" : ", ") + n;
    o += fmt::format("<p><b>Injected by saturate</b> (the script has no flag for them): {}.", Esc(names));
    if (r.code_changes.empty()) {
      o += " The recommendation keeps the script's own values: no code change.</p>\n";
    } else {
      o += " The command above runs without them; to keep them, change the script:</p>\n<ul>\n";
      for (const auto& c : r.code_changes)
        o += fmt::format("<li>{}: <code>{}</code></li>\n", Esc(c.where), Esc(c.code));
      o += "</ul>\n";
    }
  }
  if (s.fastest != s.recommended)
    o += fmt::format("<p><b>Fastest:</b> {}{}</p>\n", Esc(ValuesText(s.fastest, order)), Esc(FastestTie(s)));
  if (std::string largest = LargestBatchText(r); !largest.empty())
    o += fmt::format("<p><b>Largest batch that fits:</b> {}</p>\n", Esc(largest));
  if (std::string needs = NeedsSentence(r.needs, r.machine.gpu_index >= 0); !needs.empty())
    o += fmt::format("<p>{}</p>\n", Esc(needs));
  if (std::string flops = FlopsLine(r); !flops.empty()) o += fmt::format("<p>{}</p>\n", Esc(flops));
  if (std::string energy = EnergyLine(r); !energy.empty()) o += fmt::format("<p>{}</p>\n", Esc(energy));
  if (std::string cost = CostLine(r); !cost.empty()) o += fmt::format("<p>{}</p>\n", Esc(cost));
  if (std::string what_if = WhatIfSection(r); !what_if.empty()) o += fmt::format("<pre>{}</pre>\n", Esc(what_if));
  if (r.trace) {
    std::vector<std::string> lines = core::TraceOutcomeLines(*r.trace);
    for (std::string& line : lines) line = Esc(line);
    o += fmt::format("<pre>{}</pre>\n", JoinNonEmpty(lines, "\n"));
  }
  return report::Box(o);
}

std::string KnobTable(const TuneResult& r) {
  report::Table t;
  t.headers = {"knob", "range", "reaches the script by", "searched", "script's value", "note"};
  for (const auto& k : r.search.knobs) {
    t.rows.push_back({{report::Text(k.spec.name), report::Text(k.spec.RangeText()),
                       report::Text(std::string(DeliveryName(k.spec.delivery))), report::Text(k.exposed ? "yes" : "no"),
                       report::Text(k.script_value ? ValueText(*k.script_value) : ""), report::Text(k.note)},
                      ""});
  }
  return report::RenderTable(t);
}

std::string TrialTable(const TuneResult& r) {
  report::Table t;
  t.headers = {"#", "step", "mode", "settings", "samples/s", "±95%", "result", "time"};
  t.sortable = true;
  const std::vector<std::string> order = KnobOrder(r);
  for (const Trial& trial : r.search.trials) {
    const TrialRow row = MakeRow(trial, order);
    t.rows.push_back({{report::Number(std::to_string(row.id), row.id), report::Text(row.step), report::Text(row.mode),
                       report::Text(row.settings),
                       report::Number(row.rate, trial.samples_per_s > 0 ? std::optional<double>(trial.samples_per_s)
                                                                         : std::nullopt),
                       report::Number(row.interval, std::nullopt), report::Text(row.result),
                       report::Number(row.time, trial.wall_s)},
                      row.ok ? "" : "bad"});
  }
  return report::RenderTable(t);
}

}  // namespace

std::string HtmlReport(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  std::string command;
  for (const auto& a : RedactCommand(r.command, r.shell)) command += (command.empty() ? "" : " ") + a;
  const core::Machine& m = r.machine;
  report::PageOptions page;
  page.title = "saturate tune: " + command;
  page.heading = "saturate tune";
  page.sub_html = fmt::format("<code>{}</code><br>{} ({} usable of {} CPUs{}{}) — {} trials ({} run, {} from the "
                              "cache) in {:.0f}s of a {:.0f}s budget{}; strategy {}",
                              Esc(command), Esc(m.hostname), m.usable_cores, m.cpu_count,
                              m.mem_total_bytes ? ", " + FormatBytes(static_cast<double>(*m.mem_total_bytes)) + " RAM" : "",
                              m.gpu_index >= 0 ? ", GPU " + Esc(m.gpu_name) : ", no GPU", s.trials.size(), r.trials_run,
                              r.trials_cached, r.wall_s, r.budget_s,
                              r.stop_reason.empty() ? "" : " (" + Esc(r.stop_reason) + ")", StrategyName(r.strategy));
  page.footer_html = "Made by saturate " SATURATE_VERSION "; results.json and results.csv beside this page hold every "
                     "number.";
  std::string o = Summary(r);
  if (!s.decisions.empty()) {
    o += report::Section("Why") + "<ul>\n";
    for (const auto& d : s.decisions) o += fmt::format("<li>{}</li>\n", Esc(d.text));
    o += "</ul>\n";
  }
  if (!s.warnings.empty()) {
    o += "<ul class=\"warn\">\n";
    for (const auto& w : s.warnings) o += fmt::format("<li>{}</li>\n", Esc(w));
    o += "</ul>\n";
  }
  o += report::Section("Charts") + "<div class=\"charts\">\n" + WorkersChart(r) + BatchChart(r) + "</div>\n";
  o += UtilisationChart(r);
  o += report::Section("Throughput over time") + TimeCharts(r);
  o += report::Section("Knobs") + KnobTable(r);
  o += report::Section("Trials") + TrialTable(r);
  return report::Page(page, o);
}

}  // namespace sat::tune
