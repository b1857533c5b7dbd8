#include "probe/html_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/energy.h"
#include "core/peak_flops.h"
#include "core/stage_costs.h"
#include "probe/ranks.h"
#include "probe/report.h"
#include "probe/verdict.h"
#include "probe/what_if.h"
#include "report/page.h"
#include "report/share_bar.h"
#include "report/svg_chart.h"
#include "report/table.h"
#include "util/redact.h"
#include "util/shell.h"
#include "util/strings.h"

namespace sat::probe {
namespace {

using core::Cost;
using core::EnergyPerSample;
using core::GpuPeak;
using core::GpuPoint;
using core::Machine;
using core::StageFailed;
using core::StageMeasured;
using core::StageName;
using core::StageResult;
using core::StageTelemetry;
using report::XmlEscape;

constexpr const char* kBlue = "#2e6fbf";
constexpr const char* kOrange = "#e08a1e";
constexpr const char* kGreen = "#2a9d5b";
constexpr const char* kRed = "#c0392b";
constexpr const char* kGrey = "#8c8c8c";
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kLeastDiskBusyPct = 1;  // below this the disk's share says nothing about what it could supply
constexpr double kLeastBytesPerSample = 1024;  // read from disk per sample below this: the data came from memory

std::optional<double> RateOf(const StageResult& s) {
  return StageMeasured(s) ? std::optional<double>(s.estimate.samples_per_s) : std::nullopt;
}

std::string NotMeasured(const StageResult& s) {
  if (!s.ran) return s.skipped_why.empty() ? "not run" : "not run: " + s.skipped_why;
  if (StageFailed(s)) return std::string("failed: ") + std::string(run::ExitClassName(s.outcome.exit_class));
  return "no throughput reported";
}

report::Pipe StagePipe(const std::string& name, const StageResult& s, const std::string& how) {
  report::Pipe p{name, RateOf(s), "", how};
  p.rate_text = p.rate ? FormatRate(*p.rate) : NotMeasured(s);
  return p;
}

bool AnyNetworkData(const ProbeResult& r) {
  return std::any_of(r.data_locations.begin(), r.data_locations.end(),
                     [](const core::DataLocation& d) { return d.network; });
}

report::Pipe StoragePipe(const ProbeResult& r) {
  report::Pipe p{"storage", std::nullopt, "not measured", ""};
  const StageTelemetry& t = r.loader.telemetry;
  std::optional<double> loader = RateOf(r.loader);
  if (AnyNetworkData(r)) {
    p.detail = "the data is on a network filesystem: the local disk's load says nothing about it";
  } else if (!loader) {
    p.detail = "needs the loader stage";
  } else if (!t.tree_read_bytes_per_s || t.tree_read_bytes_per_s->mean < kLeastBytesPerSample * *loader) {
    p.rate_text = "not limiting";
    p.detail = "the loader read nothing from disk (the files came from memory)";
  } else if (!t.disk_busy_pct || t.disk_busy_pct->mean < kLeastDiskBusyPct) {
    p.detail = fmt::format("reads {:.1f} MiB/s; the disk's busy share was not seen",
                           t.tree_read_bytes_per_s->mean / kMiB);
  } else {
    const double busy = std::min(100.0, t.disk_busy_pct->mean);
    p.rate = *loader * 100 / busy;
    p.rate_text = "≈ " + FormatRate(*p.rate);
    p.detail = fmt::format("the loader read {:.1f} MiB/s with the disk {} busy", t.tree_read_bytes_per_s->mean / kMiB,
                           FormatPct(busy));
  }
  return p;
}

report::Pipe CopyPipe(const ProbeResult& r) {
  report::Pipe p{"host-to-device", std::nullopt, "not measured", ""};
  if (r.machine.gpu_index < 0) {
    p.rate_text = "no GPU";
    return p;
  }
  const core::WhatIfInputs in = WhatIfInputsOf(r);
  const GpuPeak* gpu = core::FindGpuPeak(r.machine.gpu_name);
  if (!in.bytes_per_sample || *in.bytes_per_sample <= 0) {
    p.detail = "the GPU reported no PCIe receive throughput in the full stage";
  } else if (gpu == nullptr || gpu->host_link_bytes_per_s <= 0) {
    p.detail = fmt::format("{} per sample; the host link of '{}' is not in the peak table",
                           FormatBytes(*in.bytes_per_sample), r.machine.gpu_name);
  } else {
    p.rate = gpu->host_link_bytes_per_s / *in.bytes_per_sample;
    p.rate_text = "≈ " + FormatRate(*p.rate);
    p.detail = fmt::format("{} per sample over a {}/s link", FormatBytes(*in.bytes_per_sample),
                           FormatBytes(gpu->host_link_bytes_per_s));
  }
  return p;
}

// The index of the pipe the verdict names (the pipes' order is ProbePipeline's).
std::optional<size_t> NarrowestPipe(const Verdict& v) {
  enum { kStorage, kLoader, kCopy, kCompute, kFull };
  if (v.failed || v.bottleneck.empty()) return std::nullopt;
  if (v.bottleneck == "storage") return kStorage;  // fetch stalls bind the loader (verdict.h)
  if (v.bottleneck == "loader") {
    const bool storage = v.cause.rfind("storage", 0) == 0 || v.cause.find("network filesystem") != std::string::npos;
    return storage ? kStorage : kLoader;
  }
  if (v.bottleneck == "compute") return kCompute;
  if (v.bottleneck == "transfer") return kCopy;
  return kFull;  // step-overhead, straggler: the loop's own time
}

bool Shell(const ProbeResult& r) {
  return r.command.size() == 1 && r.command[0].find(' ') != std::string::npos;
}

std::string VerdictBox(const ProbeResult& r) {
  const Verdict& v = r.verdict;
  std::string o;
  if (v.failed) {
    o += fmt::format("<p class=\"verdict\"><b>Verdict: failed</b> — {}</p>\n", XmlEscape(v.failure));
  } else if (v.bottleneck.empty()) {
    o += fmt::format("<p class=\"verdict\"><b>Verdict: unknown</b> — {}</p>\n", XmlEscape(v.evidence));
  } else {
    o += fmt::format("<p class=\"verdict\"><b>Verdict: {}</b>{}</p>\n<p class=\"evidence\">{}</p>\n",
                     XmlEscape(v.bottleneck), v.cause.empty() ? "" : " (" + XmlEscape(v.cause) + ")",
                     XmlEscape(v.evidence));
  }
  if (!v.next.empty()) o += fmt::format("<p><b>Next knob:</b> {}</p>\n", XmlEscape(v.next));
  o += "<p>Run next:</p>\n" + report::CopyBlock(NextCommand(r));
  return report::Box(o, v.failed);
}

std::string SeriesCharts(const ProbeResult& r) {
  std::string o = "<div class=\"charts\">\n";
  int drawn = 0;
  for (const StageResult* s : {&r.full, &r.loader, &r.compute}) {
    if (s->series.empty()) continue;
    const measure::SteadyState& e = s->estimate;
    report::Chart c;
    c.title = fmt::format("{}: throughput over time", StageName(s->kind));
    c.width = 370;
    c.height = 220;
    c.x.label = "seconds since its first report";
    c.y.label = "samples/s";
    report::Series rate{"", kBlue, {}, report::SeriesStyle::kLine};
    for (const measure::RatePoint& p : s->series) rate.points.emplace_back(p.t_s, p.samples_per_s);
    c.series.push_back(std::move(rate));
    if (e.warmup_s > 0) c.bands.push_back({0, e.warmup_s, "warm-up", "#f6d7a7"});
    if (StageMeasured(*s) && std::isfinite(e.steady_s) && e.steady_s > 0) {
      c.bands.push_back({e.warmup_s, e.warmup_s + e.steady_s, "steady", "#cdeccf"});
      c.lines.push_back({e.samples_per_s, FormatNumber(e.samples_per_s), kGreen});
    }
    o += report::Figure(report::RenderSvg(c), "");
    ++drawn;
  }
  if (drawn == 0) return "<p class=\"sub\">No stage reported its throughput over time.</p>\n";
  return o + "</div>\n<p class=\"sub\">The shaded start is the warm-up the estimator cut; the green window the "
             "steady part the estimate (the line) is taken over.</p>\n";
}

std::string StepBar(const ProbeResult& r) {
  std::optional<StepParts> parts = StepPartsOf(r.full);
  if (!parts) return "<p class=\"sub\">Step time: n/a (no data wait or phase times reported).</p>\n";
  std::vector<report::Share> shares;
  static const char* const kPhaseColors[] = {"#8e44ad", "#16a085", "#7f8c8d", "#d35400"};
  if (r.full.data_wait_share) shares.push_back({"data wait", parts->data_wait, kRed});
  shares.push_back({r.full.auto_seen ? "model" : "compute and the rest", parts->rest, kBlue});
  size_t i = 0;
  for (const auto& [name, share] : parts->phases) shares.push_back({PhaseLabel(name), share, kPhaseColors[i++ % 4]});
  return report::RenderShareBar(shares);
}

std::string GpuLanes(const ProbeResult& r) {
  std::string o;
  for (const StageResult* s : {&r.full, &r.loader, &r.compute}) {
    if (s->gpu_series.empty()) continue;
    struct Lane {
      const char* title;
      const char* unit;
      std::optional<double> (*get)(const GpuPoint&);
      const char* color;
    };
    const Lane lanes[] = {
        {"GPU utilisation", "%", [](const GpuPoint& p) { return p.util_pct; }, kOrange},
        {"GPU memory used", "GiB",
         [](const GpuPoint& p) { return p.mem_used_bytes ? std::optional<double>(*p.mem_used_bytes / kGiB) : std::nullopt; },
         kBlue},
        {"GPU power", "W", [](const GpuPoint& p) { return p.power_w; }, kRed},
    };
    std::string row;
    for (const Lane& lane : lanes) {
      report::Chart c;
      c.title = fmt::format("{} ({})", lane.title, StageName(s->kind));
      c.width = 370;
      c.height = 150;
      c.x.label = "seconds";
      c.y.label = lane.unit;
      if (std::string_view(lane.unit) == "%") c.y.max = 100.0;
      report::Series line{"", lane.color, {}, report::SeriesStyle::kLine};
      for (const GpuPoint& p : s->gpu_series) {
        if (std::optional<double> v = lane.get(p)) line.points.emplace_back(p.t_s, *v);
      }
      if (line.points.empty()) continue;
      c.series.push_back(std::move(line));
      row += report::Figure(report::RenderSvg(c), "");
    }
    if (!row.empty()) o += "<div class=\"charts\">\n" + row + "</div>\n";
  }
  return o;
}

std::string RanksSection(const ProbeResult& r) {
  std::vector<RankRow> ranks = RankRows(r.full);
  if (ranks.empty()) return "";
  std::optional<Straggler> straggler = FindStraggler(r.full);
  report::Table t;
  t.id = "ranks";
  t.headers = {"rank", "samples/s", "data wait", "step", "own time per step", "to backward", ""};
  for (const RankRow& k : ranks) {
    const bool slow = straggler && straggler->rank == k.rank;
    t.rows.push_back({{report::Number(std::to_string(k.rank), static_cast<double>(k.rank)),
                       report::Number(FormatNumber(k.samples_per_s), k.samples_per_s),
                       report::Number(FormatShare(k.wait_share), k.wait_share),
                       report::Number(FormatNumber(k.step_ms) + " ms", k.step_ms),
                       report::Number(FormatNumber(k.own_ms) + " ms", k.own_ms),
                       report::Number(k.to_backward_ms ? FormatNumber(*k.to_backward_ms) + " ms" : "n/a",
                                      k.to_backward_ms),
                       report::Text(slow ? "straggler" : "")},
                      slow ? "bad straggler" : ""});
  }
  std::string o = report::Section("Ranks", "ranks") + report::RenderTable(t);
  if (straggler) {
    o += fmt::format("<p><b>Straggler: rank {}</b> — {}; {}</p>\n", straggler->rank, XmlEscape(straggler->cause),
                     XmlEscape(straggler->evidence));
  } else {
    o += "<p class=\"sub\">No rank is a straggler: none is 10% of a step slower than the others' median.</p>\n";
  }
  return o;
}

std::string WhatIfSection(const ProbeResult& r) {
  if (r.what_if.empty()) return "";
  const core::WhatIf w = EstimateWhatIf(r, r.what_if);
  std::string o = report::Section("What if (estimates)", "what-if");
  if (!w.unavailable_why.empty()) return o + fmt::format("<p>n/a: {}</p>\n", XmlEscape(w.unavailable_why));
  report::Table t;
  t.headers = {"on", "samples/s", "narrowest", "vs now", "per epoch", "note"};
  for (const core::WhatIfLine& l : w.lines) {
    t.rows.push_back({{report::Text(l.label),
                       report::Number(l.samples_per_s ? FormatNumber(*l.samples_per_s) : "n/a", l.samples_per_s),
                       report::Text(l.narrowest), report::Number(l.vs_now ? FormatTimes(*l.vs_now) : "", l.vs_now),
                       report::Number(l.per_epoch ? FormatNumber(*l.per_epoch) : "", l.per_epoch),
                       report::Text(l.note)},
                      ""});
  }
  o += report::RenderTable(t) + "<ul class=\"sub\">\n";
  for (const std::string& a : w.assumptions) o += "<li>" + XmlEscape(a) + "</li>\n";
  return o + "</ul>\n";
}

std::string EnergyAndCost(const ProbeResult& r) {
  report::Table t;
  t.headers = {"stage", "J per sample", "samples per kWh", "power", "per million samples", "per epoch"};
  std::string source;
  for (const StageResult* s : {&r.full, &r.compute, &r.loader}) {
    std::optional<EnergyPerSample> e = core::EnergyPerSampleOf(*s);
    std::optional<Cost> c = r.price_per_gpu_hour ? core::CostOf(*s, *r.price_per_gpu_hour) : std::nullopt;
    if (!e && !c) continue;
    if (e) source = e->method;
    auto num = [](std::optional<double> v) { return report::Number(v ? FormatNumber(*v) : "n/a", v); };
    t.rows.push_back({{report::Text(std::string(StageName(s->kind))),
                       num(e ? std::optional<double>(e->joules_per_sample) : std::nullopt),
                       num(e ? std::optional<double>(e->samples_per_kwh) : std::nullopt),
                       report::Number(e ? FormatNumber(e->watts) + " W" : "n/a",
                                      e ? std::optional<double>(e->watts) : std::nullopt),
                       num(c ? std::optional<double>(c->per_million_samples) : std::nullopt),
                       num(c ? c->per_epoch : std::nullopt)},
                      ""});
  }
  const std::string energy = EnergyLine(r), cost = CostLine(r);
  if (t.rows.empty() && energy.empty() && cost.empty()) return "";
  std::string o = report::Section("Energy and cost", "cost");
  if (!t.rows.empty()) o += report::RenderTable(t);
  for (const std::string& line : {energy, cost}) {
    if (!line.empty()) o += "<p class=\"sub\">" + XmlEscape(line) + "</p>\n";
  }
  return o;
}

std::string StageTable(const ProbeResult& r) {
  report::Table t;
  t.headers = {"stage", "samples/s", "95% interval", "±", "warm-up", "steady", "ended"};
  for (const StageResult* s : {&r.loader, &r.compute, &r.full}) {
    const measure::SteadyState& e = s->estimate;
    const bool measured = StageMeasured(*s);
    const bool interval = measured && std::isfinite(e.ci_low) && std::isfinite(e.ci_high);
    t.rows.push_back(
        {{report::Text(std::string(StageName(s->kind))),
          report::Number(measured ? FormatNumber(e.samples_per_s) : "n/a",
                         measured ? std::optional<double>(e.samples_per_s) : std::nullopt),
          report::Text(interval ? FormatNumber(e.ci_low) + " – " + FormatNumber(e.ci_high) : "n/a"),
          report::Text(measured && std::isfinite(e.rel_half_width) ? fmt::format("±{:.1f}%", e.rel_half_width * 100)
                                                                    : "n/a"),
          report::Text(measured ? fmt::format("{:.1f} s", e.warmup_s) : ""),
          report::Text(measured ? fmt::format("{:.1f} s", e.steady_s) : ""),
          report::Text(s->ran ? std::string(run::ExitClassName(s->outcome.exit_class)) : NotMeasured(*s))},
         StageFailed(*s) ? "bad" : ""});
  }
  return report::RenderTable(t);
}

}  // namespace

report::Pipeline ProbePipeline(const ProbeResult& r) {
  report::Pipeline p;
  p.pipes.push_back(StoragePipe(r));
  p.pipes.push_back(StagePipe("loader", r.loader, "the DataLoader alone, no model"));
  p.pipes.push_back(CopyPipe(r));
  p.pipes.push_back(StagePipe("compute", r.compute, "the model on cached batches"));
  p.pipes.push_back(StagePipe("full training", r.full, "the command as it is"));
  p.narrowest = NarrowestPipe(r.verdict);
  if (p.narrowest) p.narrowest_why = r.verdict.evidence;
  return p;
}

std::string NextCommand(const ProbeResult& r) {
  const bool shell = Shell(r);
  const std::string command = ShellJoin(RedactCommand(r.command, shell));
  const std::string shell_flag = shell ? "--shell " : "";
  if (!r.verdict.failed && r.verdict.bottleneck.empty()) {
    return fmt::format("saturate probe --budget {:.0f}s {}-- {}", std::max(240.0, r.budget_s * 2), shell_flag, command);
  }
  return fmt::format("saturate tune {}-- {}", shell_flag, command);
}

std::string ProbeHtml(const ProbeResult& r) {
  const Machine& m = r.machine;
  const std::string command = ShellJoin(RedactCommand(r.command, Shell(r)));
  report::PageOptions page;
  page.title = "saturate probe: " + command;
  page.heading = "saturate probe";
  page.sub_html = fmt::format("<code>{}</code><br>{} ({} usable of {} CPUs{}, {}) — {:.0f} s of a {:.0f} s budget{}",
                              XmlEscape(command), XmlEscape(m.hostname), m.usable_cores, m.cpu_count,
                              m.mem_total_bytes ? ", " + FormatBytes(static_cast<double>(*m.mem_total_bytes)) + " RAM"
                                                : "",
                              m.gpu_index >= 0 ? "GPU " + XmlEscape(m.gpu_name) : "no GPU", r.wall_s, r.budget_s,
                              r.interrupted ? "; interrupted" : "");
  page.footer_html = "Made by saturate " SATURATE_VERSION "; probe.json beside this page holds every number.";

  std::string o = VerdictBox(r);
  o += report::Section("The pipeline", "pipes") + report::RenderPipes(ProbePipeline(r));
  o += "<p class=\"sub\">Each pipe is as thick as the samples per second it carried (≈: estimated from what the "
       "sampler saw). Training runs at the rate of its narrowest pipe.</p>\n";
  o += report::Section("Throughput over time", "series") + SeriesCharts(r);
  o += report::Section("Where a training step's time goes", "step") + StepBar(r);
  if (std::string lanes = GpuLanes(r); !lanes.empty()) o += report::Section("The GPU over time", "gpu") + lanes;
  o += RanksSection(r);
  o += WhatIfSection(r);
  o += EnergyAndCost(r);
  o += report::Section("Stages", "stages") + StageTable(r);
  if (std::string flops = FlopsLine(r); !flops.empty()) o += "<p class=\"sub\">" + XmlEscape(flops) + "</p>\n";
  if (!r.verdict.notes.empty()) {
    o += report::Section("Notes", "notes") + "<ul>\n";
    for (const std::string& n : r.verdict.notes) o += "<li>" + XmlEscape(n) + "</li>\n";
    o += "</ul>\n";
  }
  return report::Page(page, o);
}

}  // namespace sat::probe
