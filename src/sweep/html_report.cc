#include "sweep/html_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/page.h"
#include "report/svg_chart.h"
#include "report/table.h"
#include "report/timeline.h"
#include "sweep/journal.h"
#include "sweep/sweep_journal.h"
#include "sweep/view.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

using report::XmlEscape;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr size_t kMaxLanePoints = 400;  // per device lane: every k-th point beyond this

struct OutcomeStyle {
  const char* name;
  const char* color;
  const char* label;
};
constexpr OutcomeStyle kOutcomes[] = {
    {"done", "#2a9d5b", "done"},         {"early-stopped", "#7fb3d5", "early-stopped"},
    {"retried", "#e08a1e", "retried"},   {"oom", "#8e44ad", "out of memory"},
    {"failed", "#c0392b", "failed"},     {"interrupted", "#9e9e9e", "interrupted"},
    {"running", "#2e6fbf", "running"},
};

const char* ColorOf(const std::string& outcome) {
  for (const OutcomeStyle& o : kOutcomes) {
    if (outcome == o.name) return o.color;
  }
  return "#555";
}

// Seconds on the axis: the unit a sweep of `span_s` reads best in.
struct TimeUnit {
  double seconds;
  const char* name;
};
TimeUnit UnitFor(double span_s) {
  if (span_s > 3 * 3600) return {3600, "hours"};
  if (span_s > 10 * 60) return {60, "minutes"};
  return {1, "seconds"};
}

double EndOf(const AttemptRecord& a, double now) { return a.ended_unix.value_or(std::max(now, a.started_unix)); }

std::string Params(const nlohmann::json& params) {
  std::vector<std::string> parts;
  if (params.is_object()) {
    for (const auto& [name, value] : params.items()) {
      parts.push_back(name + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    }
  }
  return JoinNonEmpty(parts, " ");
}

// Every attempt of each run, keyed by run, to tell a retried attempt from a run's last.
std::map<std::string, int> LastAttemptNo(const std::vector<AttemptRecord>& attempts) {
  std::map<std::string, int> last;
  for (const AttemptRecord& a : attempts) last[a.run_key] = std::max(last[a.run_key], a.attempt_no);
  return last;
}

// The lanes the attempts ran on, in reading order: "GPU 2" before "GPU 10", then the CPU pool, then nodes.
std::vector<std::string> SortedLanes(const SweepPage& p) {
  std::vector<std::string> lanes;
  for (const std::string& lane : p.lanes) {
    if (std::find(lanes.begin(), lanes.end(), lane) == lanes.end()) lanes.push_back(lane);
  }
  std::sort(lanes.begin(), lanes.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return lanes;
}

std::string TimelineSvg(const SweepPage& p, double t0, TimeUnit unit) {
  report::Timeline t;
  t.title = fmt::format("Every attempt on its device ({} attempt{})", p.attempts.size(),
                        p.attempts.size() == 1 ? "" : "s");
  t.x_label = fmt::format("{} since the first attempt started", unit.name);
  t.lanes = SortedLanes(p);
  std::map<std::string, int64_t> index;
  for (const RunRecord& r : p.status.runs) index[r.key] = r.index;
  const std::map<std::string, int> last = LastAttemptNo(p.attempts);
  std::set<std::string> seen;
  for (size_t i = 0; i < p.attempts.size(); ++i) {
    const AttemptRecord& a = p.attempts[i];
    const std::string outcome = AttemptOutcomeName(a, a.attempt_no < last.at(a.run_key));
    seen.insert(outcome);
    const double end = EndOf(a, p.now_unix);
    report::TimelineBar bar;
    bar.lane = p.lanes[i];
    bar.start = (a.started_unix - t0) / unit.seconds;
    bar.end = (end - t0) / unit.seconds;
    bar.color = ColorOf(outcome);
    bar.css_class = "attempt " + outcome;
    bar.label = fmt::format("#{}", index[a.run_key]);
    bar.tooltip = fmt::format("run #{} {} attempt {}: {} after {}{}{}", index[a.run_key], a.run_key, a.attempt_no,
                              outcome, FormatNumber(end - a.started_unix) + " s",
                              a.detail.empty() ? "" : " — " + a.detail,
                              a.slurm_job.empty() ? "" : " (job " + a.slurm_job + ")");
    bar.open = !a.ended_unix;
    t.bars.push_back(std::move(bar));
  }
  for (const OutcomeStyle& o : kOutcomes) {
    if (seen.count(o.name)) t.legend.push_back({o.label, o.color});
  }
  t.width = std::max(760, std::min(1400, 300 + 14 * static_cast<int>(p.attempts.size())));
  return report::RenderTimeline(t);
}

// Runs at once, and the most on one device, as step lines over time.
std::string PackingSvg(const SweepPage& p, double t0, TimeUnit unit) {
  struct Event {
    double t;
    int delta;
    size_t lane;
  };
  std::vector<std::string> lanes;
  std::vector<Event> events;
  for (size_t i = 0; i < p.attempts.size(); ++i) {
    auto it = std::find(lanes.begin(), lanes.end(), p.lanes[i]);
    size_t lane = static_cast<size_t>(it - lanes.begin());
    if (it == lanes.end()) lanes.push_back(p.lanes[i]);
    events.push_back({(p.attempts[i].started_unix - t0) / unit.seconds, +1, lane});
    events.push_back({(EndOf(p.attempts[i], p.now_unix) - t0) / unit.seconds, -1, lane});
  }
  // Ends before starts at the same instant: a run that replaces another is not counted as packed with it.
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.t != b.t ? a.t < b.t : a.delta < b.delta;
  });
  report::Chart c;
  c.title = "Packing over time";
  c.width = 760;
  c.height = 220;
  c.x.label = fmt::format("{} since the first attempt started", unit.name);
  c.y.label = "runs";
  report::Series total{"runs at once", "#2e6fbf", {}, report::SeriesStyle::kLine};
  report::Series most{"most on one device", "#e08a1e", {}, report::SeriesStyle::kLine};
  std::vector<int> on(lanes.size(), 0);
  int all = 0, top = 0;
  for (const Event& e : events) {
    total.points.emplace_back(e.t, all);
    most.points.emplace_back(e.t, top);
    on[e.lane] += e.delta;
    all += e.delta;
    top = on.empty() ? 0 : *std::max_element(on.begin(), on.end());
    total.points.emplace_back(e.t, all);
    most.points.emplace_back(e.t, top);
  }
  c.series = {total, most};
  return report::Figure(report::RenderSvg(c), "The packing degree: how many runs ran at once, and the most that "
                                              "shared one device.");
}

// One small chart per device: memory used and utilisation from the device log; without one, the sum of the
// measured peaks of the runs the device held.
std::string DeviceLanes(const SweepPage& p, double t0, double span, TimeUnit unit) {
  std::string o;
  for (const std::string& lane : SortedLanes(p)) {
    std::vector<const DevicePoint*> points;
    for (const DevicePoint& d : p.devices) {
      if (d.device == lane && d.time_unix >= t0) points.push_back(&d);
    }
    report::Chart c;
    c.title = lane;
    c.width = 370;
    c.height = 170;
    c.x.label = unit.name;
    c.x.min = 0.0;  // the timeline's span, so that a lane lines up with the bars above it
    c.x.max = span / unit.seconds;
    c.y.label = "memory GiB";
    c.y2 = report::Axis{.label = "utilisation %", .min = 0.0, .max = 100.0};
    report::Series mem{"memory used", "#2e6fbf", {}, report::SeriesStyle::kLine};
    report::Series util{"utilisation", "#e08a1e", {}, report::SeriesStyle::kLine, true};
    const size_t step = points.size() / kMaxLanePoints + 1;
    for (size_t i = 0; i < points.size(); i += step) {
      const double x = (points[i]->time_unix - t0) / unit.seconds;
      if (points[i]->mem_used_bytes) mem.points.emplace_back(x, *points[i]->mem_used_bytes / kGiB);
      if (points[i]->util_pct) util.points.emplace_back(x, *points[i]->util_pct);
    }
    std::string caption = "as sampled";
    if (mem.points.empty() && util.points.empty()) {
      // Not recorded: the measured peaks of the runs on the device, summed while they ran.
      std::map<std::string, const RunRecord*> runs;
      for (const RunRecord& r : p.status.runs) runs[r.key] = &r;
      std::vector<std::pair<double, double>> steps;  // (time, +/- bytes)
      for (size_t i = 0; i < p.attempts.size(); ++i) {
        const AttemptRecord& a = p.attempts[i];
        const RunRecord* r = runs.count(a.run_key) ? runs[a.run_key] : nullptr;
        if (p.lanes[i] != lane || r == nullptr || a.attempt_no != r->attempts) continue;
        std::optional<double> peak = r->measurements.peak_gpu_memory_bytes
                                         ? std::optional<double>(static_cast<double>(*r->measurements.peak_gpu_memory_bytes))
                                         : r->measurements.rss_bytes ? std::optional<double>(static_cast<double>(*r->measurements.rss_bytes))
                                                                     : std::nullopt;
        if (!peak) continue;
        steps.emplace_back((a.started_unix - t0) / unit.seconds, *peak);
        steps.emplace_back((EndOf(a, p.now_unix) - t0) / unit.seconds, -*peak);
      }
      if (steps.empty()) continue;
      std::sort(steps.begin(), steps.end());
      double held = 0;
      for (const auto& [x, delta] : steps) {
        mem.points.emplace_back(x, std::max(0.0, held) / kGiB);
        held += delta;
        mem.points.emplace_back(x, std::max(0.0, held) / kGiB);
      }
      mem.name = "runs' measured peaks, summed";
      c.y2.reset();
      caption = "not sampled: the measured peak memory of each run it held, added up while they ran";
    }
    // A few points (a short sweep) are drawn as points too, so that one reading still shows.
    for (report::Series* series : {&mem, &util}) {
      if (series->points.size() < 20) series->style = report::SeriesStyle::kLinePoints;
    }
    c.series.push_back(mem);
    if (!util.points.empty()) c.series.push_back(util);
    o += report::Figure(report::RenderSvg(c), caption);
  }
  return o.empty() ? "" : "<div class=\"charts\">\n" + o + "</div>\n";
}

std::string RunsTable(const SweepPage& p) {
  const std::optional<MetricSpec>& metric = p.status.sweep.metric;
  std::set<std::string> params, metrics;
  for (const RunRecord& r : p.status.runs) {
    if (r.params.is_object()) {
      for (const auto& [name, value] : r.params.items()) params.insert(name);
    }
    for (const auto& [name, value] : r.best_metrics.items()) {
      if (!metric || name != metric->name) metrics.insert(name);
    }
  }
  report::Table t;
  t.id = "runs";
  t.sortable = true;
  t.headers = {"#", "run", "state", "attempts"};
  if (metric) t.headers.push_back(metric->name + (metric->goal == Goal::kMinimize ? " (min)" : " (max)"));
  for (const std::string& m : metrics) t.headers.push_back(m);
  for (const std::string& name : params) t.headers.push_back(name);
  for (const char* h : {"samples/s", "peak GPU memory", "CPU", "run time", "energy"}) t.headers.emplace_back(h);
  auto metric_cell = [](const RunRecord& r, const std::string& name) {
    auto it = r.best_metrics.find(name);
    if (it == r.best_metrics.end() || !it->is_number()) return report::Text("");
    const double v = it->get<double>();
    return report::Number(fmt::format("{:.6g}", v), v);
  };
  for (const RunRecord& r : p.status.runs) {
    report::Row row;
    const std::string state = r.stopped_early ? "done (stopped early)" : std::string(RunStateName(r.state));
    row.cells = {report::Number(std::to_string(r.index), static_cast<double>(r.index)), report::Text(r.key),
                 report::Text(state), report::Number(std::to_string(r.attempts), r.attempts)};
    if (metric) row.cells.push_back(metric_cell(r, metric->name));
    for (const std::string& m : metrics) row.cells.push_back(metric_cell(r, m));
    for (const std::string& name : params) {
      auto it = r.params.is_object() ? r.params.find(name) : r.params.end();
      if (!r.params.is_object() || it == r.params.end()) {
        row.cells.push_back(report::Text(""));
      } else if (it->is_number()) {
        row.cells.push_back(report::Number(it->dump(), it->get<double>()));
      } else {
        row.cells.push_back(report::Text(it->is_string() ? it->get<std::string>() : it->dump()));
      }
    }
    const Measurements& m = r.measurements;
    const std::optional<double> run_s = r.started_unix && r.finished_unix
                                            ? std::optional<double>(*r.finished_unix - *r.started_unix)
                                            : std::nullopt;
    row.cells.push_back(report::Number(m.throughput_samples_per_s ? FormatNumber(*m.throughput_samples_per_s) : "",
                                       m.throughput_samples_per_s));
    row.cells.push_back(report::Number(
        m.peak_gpu_memory_bytes ? FormatBytes(static_cast<double>(*m.peak_gpu_memory_bytes)) : "",
        m.peak_gpu_memory_bytes ? std::optional<double>(static_cast<double>(*m.peak_gpu_memory_bytes)) : std::nullopt));
    row.cells.push_back(report::Number(m.cpu_pct ? FormatPct(*m.cpu_pct) : "", m.cpu_pct));
    row.cells.push_back(report::Number(run_s ? FormatNumber(*run_s) + " s" : "", run_s));
    row.cells.push_back(report::Number(m.energy_j ? FormatNumber(*m.energy_j / 1000) + " kJ" : "", m.energy_j));
    row.css_class = r.state == RunState::kFailed ? "bad" : "";
    t.rows.push_back(std::move(row));
  }
  return report::RenderTable(t);
}

std::string SummaryBox(const SweepPage& p, const SweepTiming& timing) {
  std::string o = fmt::format("<p><b>{}</b>{}</p>\n", XmlEscape(CountsLine(p.status.counts)),
                              p.live ? " — running; this page reloads itself" : "");
  if (timing.attempts > 0) {
    o += fmt::format("<p class=\"makespan\">Makespan <b>{}</b> against <b>{}</b> for the same {} attempt{} one by one",
                     FormatDuration(timing.makespan_s), FormatDuration(timing.one_by_one_s), timing.attempts,
                     timing.attempts == 1 ? "" : "s");
    if (timing.makespan_s > 0) o += fmt::format(" ({} faster)", FormatTimes(timing.one_by_one_s / timing.makespan_s));
    o += ".</p>\n";
  }
  const std::optional<MetricSpec>& metric = p.status.sweep.metric;
  if (metric && !p.status.runs.empty()) {
    const RunRecord& best = p.status.runs.front();
    auto it = best.best_metrics.find(metric->name);
    if (it != best.best_metrics.end() && it->is_number()) {
      o += fmt::format("<p>Best {} ({}): <b>{:.6g}</b> — run #{} {}</p>\n", XmlEscape(metric->name),
                       metric->goal == Goal::kMinimize ? "lowest" : "highest", it->get<double>(), best.index,
                       XmlEscape(Params(best.params)));
    }
  }
  for (const std::string& text : {FormatGpuHours(p.status.gpu_hours, p.price_per_gpu_hour),
                                  FormatEnergy(p.status.energy)}) {
    if (!text.empty()) o += "<p class=\"sub\">" + XmlEscape(text) + "</p>\n";
  }
  for (const std::string& line : Split(ClockedText(p.status.clocked, p.status.clocked_packed), '\n'))
    if (!line.empty()) o += "<p class=\"warn\">" + XmlEscape(line) + "</p>\n";
  if (!p.status.problems.empty()) {
    o += "<p class=\"warn\">The journal is inconsistent: " + XmlEscape(p.status.problems) + "</p>\n";
  }
  return report::Box(o, p.status.counts.failed > 0);
}

}  // namespace

std::string ReportPathFor(const std::string& journal_path) {
  const std::string_view suffix = ".journal";
  if (journal_path.size() > suffix.size() &&
      journal_path.compare(journal_path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return journal_path.substr(0, journal_path.size() - suffix.size()) + ".report.html";
  }
  return journal_path + ".report.html";
}

std::string LaneOf(const AttemptRecord& a, const NodeOf& node) {
  if (!a.slurm_job.empty()) {
    std::string name = node ? node(a) : "";
    return name.empty() ? "Slurm" : "node " + name;
  }
  return a.gpu_index ? GpuLane(*a.gpu_index) : std::string(kCpuPoolLane);
}

std::string AttemptOutcomeName(const AttemptRecord& a, bool later_attempt) {
  if (!a.ended_unix) return "running";
  const std::string& c = a.exit_class;
  if (c == "finished") return "done";
  if (c == "stopped_early") return "early-stopped";
  if (c == "interrupted" || c == "stopped") return "interrupted";
  if (c == "gpu_oom" || c == "host_oom") return "oom";
  return later_attempt ? "retried" : "failed";
}

Result<SweepPage> ReadSweepPage(const std::string& journal_path, const NodeOf& node) {
  SweepPage page;
  auto status = ReadStatus(journal_path);
  if (!status) return status.error();
  page.status = std::move(*status);
  auto journal = Journal::OpenReadOnly(journal_path);
  if (!journal) return journal.error();
  for (const RunRecord& r : page.status.runs) {
    auto attempts = (*journal)->Attempts(r.key);
    if (!attempts) return attempts.error();
    for (AttemptRecord& a : *attempts) page.attempts.push_back(std::move(a));
  }
  std::stable_sort(page.attempts.begin(), page.attempts.end(),
                   [](const AttemptRecord& a, const AttemptRecord& b) { return a.started_unix < b.started_unix; });
  for (const AttemptRecord& a : page.attempts) page.lanes.push_back(LaneOf(a, node));
  page.devices = ReadDeviceLog(LogDirFor(journal_path));
  page.now_unix = NowUnix();
  return page;
}

SweepTiming TimingOf(const SweepPage& p) {
  SweepTiming t;
  if (p.attempts.empty()) return t;
  double first = p.attempts.front().started_unix, last = first;
  for (const AttemptRecord& a : p.attempts) {
    const double end = EndOf(a, p.now_unix);
    first = std::min(first, a.started_unix);
    last = std::max(last, end);
    t.one_by_one_s += end - a.started_unix;
    ++t.attempts;
  }
  t.makespan_s = last - first;
  return t;
}

std::string SweepHtml(const SweepPage& p) {
  report::PageOptions page;
  const std::string& spec = p.status.sweep.spec_path;
  page.title = "saturate sweep: " + spec;
  page.heading = "saturate sweep";
  page.sub_html = fmt::format("<code>{}</code><br>journal {}", XmlEscape(spec), XmlEscape(p.status.journal_path));
  page.refresh_s = p.live ? 10 : 0;
  page.footer_html = "Made by saturate " SATURATE_VERSION "; <code>saturate sweep status</code> and <code>saturate "
                     "sweep export</code> read the same journal.";
  const SweepTiming timing = TimingOf(p);
  std::string o = SummaryBox(p, timing);
  if (!p.attempts.empty()) {
    double t0 = p.attempts.front().started_unix;
    const TimeUnit unit = UnitFor(timing.makespan_s);
    o += report::Section("Timeline", "timeline") + report::Wide(TimelineSvg(p, t0, unit));
    o += "<p class=\"sub\">One bar per attempt, from its start to its end, on the device it ran on; bars on top of "
         "each other ran packed together. A pointer over a bar names the run.</p>\n";
    o += report::Section("Packing and devices", "devices") + "<div class=\"charts\">\n" + PackingSvg(p, t0, unit) +
         "</div>\n" + DeviceLanes(p, t0, timing.makespan_s, unit);
  } else {
    o += "<p>No attempt has started yet.</p>\n";
  }
  o += report::Section("Runs", "runs") + RunsTable(p);
  o += "<p class=\"sub\">Best first by the sweep's metric; click a column's name to sort by it.</p>\n";
  return report::Page(page, o);
}

}  // namespace sat::sweep
