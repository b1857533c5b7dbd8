#include "tune/html_report.h"

#include <fmt/core.h>

#include <algorithm>

#include "tune/compare.h"
#include "tune/console.h"
#include "tune/flops.h"
#include "tune/svg_chart.h"
#include "util/redact.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

constexpr const char* kBlue = "#2e6fbf";
constexpr const char* kOrange = "#e08a1e";
constexpr const char* kGreen = "#2a9d5b";
constexpr const char* kGrey = "#7f7f7f";

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px auto; max-width: 1150px; color: #222; line-height: 1.4; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
.sub { color: #555; font-size: 13px; }
.box { background: #f4f8fc; border: 1px solid #c9dcef; border-radius: 6px; padding: 12px 16px; }
.box.fail { background: #fdf1f0; border-color: #efc9c5; }
pre { background: #272822; color: #f8f8f2; padding: 10px; border-radius: 4px; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { color: #b03a2e; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
.small { display: flex; flex-wrap: wrap; gap: 8px; }
figure { margin: 0; } figcaption { font-size: 12px; color: #555; max-width: 560px; }
.warn { color: #8a5a00; }
)";

std::string Esc(const std::string& s) { return XmlEscape(s); }

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

std::string Figure(const std::string& svg, const std::string& caption) {
  return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>\n", svg, Esc(caption));
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
  return Figure(RenderSvg(c), "Each point is a loader-only trial (no model work). The loader keeps the model fed "
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
  return Figure(RenderSvg(c), "Batch sizes tried by doubling, then bisecting the out-of-memory boundary. Crosses are "
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
  return Figure(RenderSvg(c), gpu ? "Per trial (l: loader, c: compute, f: full): throughput and the median GPU "
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
  if (s.failed) return fmt::format("<div class=\"box fail\"><b>No recommendation:</b> {}.</div>\n", Esc(s.failure));
  std::string o = "<div class=\"box\">\n";
  const Trial* confirm = s.FindTrial(s.confirm_trial);
  const Trial* base = s.FindTrial(s.baseline_trial);
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
  o += fmt::format("<pre>{}</pre>\n", Esc(RedactCommandLine(r.recommended_command)));
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
  if (!s.largest_fitting.empty())
    o += fmt::format("<p><b>Largest batch that fits:</b> {}</p>\n", Esc(ValuesText(s.largest_fitting, order)));
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
  return o + "</div>\n";
}

std::string KnobTable(const TuneResult& r) {
  std::string o = "<table><tr><th>knob</th><th>range</th><th>reaches the script by</th><th>searched</th>"
                  "<th>script's value</th><th>note</th></tr>\n";
  for (const auto& k : r.search.knobs) {
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     Esc(k.spec.name), Esc(k.spec.RangeText()), DeliveryName(k.spec.delivery),
                     k.exposed ? "yes" : "no", k.script_value ? Esc(ValueText(*k.script_value)) : "",
                     Esc(k.note));
  }
  return o + "</table>\n";
}

std::string TrialTable(const TuneResult& r) {
  std::string o = "<table><tr><th>#</th><th>step</th><th>mode</th><th>settings</th><th>samples/s</th><th>±95%</th>"
                  "<th>result</th><th>time</th></tr>\n";
  for (const auto& row : TrialRows(r)) {
    o += fmt::format("<tr{}><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                     row.ok ? "" : " class=\"bad\"", row.id, Esc(row.step), Esc(row.mode), Esc(row.settings),
                     Esc(row.rate), Esc(row.interval), Esc(row.result), Esc(row.time));
  }
  return o + "</table>\n";
}

}  // namespace

std::string HtmlReport(const TuneResult& r) {
  const SearchOutcome& s = r.search;
  std::string command;
  for (const auto& a : RedactCommand(r.command, r.shell)) command += (command.empty() ? "" : " ") + a;
  const core::Machine& m = r.machine;
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += fmt::format("<title>saturate tune: {}</title>\n<style>{}</style>\n</head>\n<body>\n", Esc(command), kStyle);
  o += fmt::format("<h1>saturate tune</h1>\n<p class=\"sub\"><code>{}</code><br>{} ({} usable of {} CPUs{}{}) — {} "
                   "trials ({} run, {} from the cache) in {:.0f}s of a {:.0f}s budget{}; strategy {}</p>\n",
                   Esc(command), Esc(m.hostname), m.usable_cores, m.cpu_count,
                   m.mem_total_bytes ? ", " + FormatBytes(static_cast<double>(*m.mem_total_bytes)) + " RAM" : "",
                   m.gpu_index >= 0 ? ", GPU " + Esc(m.gpu_name) : ", no GPU", s.trials.size(), r.trials_run,
                   r.trials_cached, r.wall_s, r.budget_s,
                   r.stop_reason.empty() ? "" : " (" + Esc(r.stop_reason) + ")", StrategyName(r.strategy));
  o += Summary(r);
  if (!s.decisions.empty()) {
    o += "<h2>Why</h2>\n<ul>\n";
    for (const auto& d : s.decisions) o += fmt::format("<li>{}</li>\n", Esc(d.text));
    o += "</ul>\n";
  }
  if (!s.warnings.empty()) {
    o += "<ul class=\"warn\">\n";
    for (const auto& w : s.warnings) o += fmt::format("<li>{}</li>\n", Esc(w));
    o += "</ul>\n";
  }
  o += "<h2>Charts</h2>\n<div class=\"charts\">\n" + WorkersChart(r) + BatchChart(r) + "</div>\n";
  o += UtilisationChart(r);
  o += "<h2>Throughput over time</h2>\n" + TimeCharts(r);
  o += "<h2>Knobs</h2>\n" + KnobTable(r);
  o += "<h2>Trials</h2>\n" + TrialTable(r);
  o += "<p class=\"sub\">Made by saturate " SATURATE_VERSION "; results.json and results.csv beside this page hold "
       "every number.</p>\n</body>\n</html>\n";
  return o;
}

}  // namespace sat::tune
