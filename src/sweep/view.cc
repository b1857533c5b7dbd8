#include "sweep/view.h"

#include <fmt/format.h>

#include <algorithm>

#include "sweep/export.h"
#include "util/strings.h"
#include "util/text_table.h"
#include "util/utf8.h"

namespace sat::sweep {
namespace {

std::string Cut(std::string line, size_t width) {
  if (width > 3 && line.size() > width) line = line.substr(0, Utf8PrefixLength(line, width - 3)) + "...";
  return line;
}

// "lr=0.01 bs=32", values as the command line gets them.
std::string ParamsText(const nlohmann::json& params) {
  std::vector<std::string> parts;
  if (params.is_object()) {
    for (const auto& [name, value] : params.items()) parts.push_back(fmt::format("{}={}", name, PyStr(value)));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string DeviceLine(const DeviceSnapshot& d) {
  std::string line = d.name;
  if (d.util_pct) line += fmt::format("  {} {:.0f}%", d.name == "cpu" ? "CPU" : "util", *d.util_pct);
  if (d.mem_used_bytes && d.mem_total_bytes) {
    line += fmt::format("  mem {}/{}", FormatBytes(*d.mem_used_bytes), FormatBytes(*d.mem_total_bytes));
  }
  if (d.power_w) line += fmt::format("  {:.0f} W", *d.power_w);
  line += fmt::format("  {} run{}, proven {}", d.runs.size(), d.runs.size() == 1 ? "" : "s", d.proven);
  if (d.cap) line += fmt::format(", capped at {} after out of memory", *d.cap);
  if (d.probing) line += ", judging the last admission";
  if (d.poor) line += ", holding";
  return line;
}

std::string RunLine(const LiveRunView& r) {
  std::string rate = r.samples_per_s ? fmt::format("{:.1f} samples/s", *r.samples_per_s)
                     : r.cpu_pct     ? fmt::format("{:.0f}% CPU", *r.cpu_pct)
                                     : std::string("-");
  return fmt::format("  #{:<4} {} {:>8} {:>18} {:>9}{}  {}", r.index, r.key, FormatDuration(r.up_s), rate,
                     FormatBytes(r.mem_bytes), r.measured ? "" : " (measuring)", ParamsText(r.params));
}

template <class T>
std::string Optional(const std::optional<T>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string();
}

nlohmann::json CountsJson(const StateCounts& c) {
  return {{"queued", c.queued}, {"running", c.running},   {"done", c.done},
          {"failed", c.failed}, {"retrying", c.retrying}, {"total", c.total()}};
}

}  // namespace

std::string CountsLine(const StateCounts& c) {
  return fmt::format("{} runs: {} queued, {} running, {} done, {} failed, {} retrying", c.total(), c.queued, c.running,
                     c.done, c.failed, c.retrying);
}

std::vector<std::string> LiveLines(const SweepSnapshot& snapshot, size_t width) {
  std::vector<std::string> lines;
  lines.push_back(Cut(fmt::format("sweep {}  {}", FormatDuration(snapshot.elapsed_s), CountsLine(snapshot.counts)), width));
  for (const DeviceSnapshot& d : snapshot.devices) {
    lines.push_back(Cut(DeviceLine(d), width));
    for (const LiveRunView& r : d.runs) lines.push_back(Cut(RunLine(r), width));
  }
  if (snapshot.staging && snapshot.staging->decision == "copying") {
    std::string text = StagingText(*snapshot.staging);
    text.pop_back();
    lines.push_back(Cut(text, width));
  }
  for (const auto& [shape, degree] : snapshot.held) {
    lines.push_back(Cut(fmt::format("held: {} run{} per device for {}", degree, degree == 1 ? "" : "s",
                                    shape.empty() ? "this sweep's runs" : shape),
                        width));
  }
  for (const std::string& line : Split(ClockedText(snapshot.clocked, snapshot.clocked_packed), '\n'))
    if (!line.empty()) lines.push_back(Cut(line, width));
  return lines;
}

std::string EventLine(const SweepEvent& e) {
  // The text may carry a run's own output (its failure line): escapes in it are shown, never sent to the terminal.
  if (e.key.empty()) return fmt::format("[{:>7.1f}s] {}", e.elapsed_s, VisibleText(e.text));
  return fmt::format("[{:>7.1f}s] #{} {} on {}: {}", e.elapsed_s, e.index, e.key, e.device, VisibleText(e.text));
}

std::string ResultsTable(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric, size_t max_rows) {
  std::vector<std::string> params;
  for (const RunRecord& r : runs) {
    if (!r.params.is_object()) continue;
    for (const auto& [name, value] : r.params.items()) {
      if (std::find(params.begin(), params.end(), name) == params.end()) params.push_back(name);
    }
  }
  std::sort(params.begin(), params.end());
  std::vector<std::string> header = {"rank", "#", "key", "state", "tries"};
  if (metric) header.push_back(metric->name + (metric->goal == Goal::kMinimize ? " (min)" : " (max)"));
  header.insert(header.end(), params.begin(), params.end());
  for (const char* c : {"samples/s", "peak mem", "CPU %"}) header.emplace_back(c);
  // Energy only where a device reported it (a GPU's NVML, the CPUs' RAPL).
  const bool energy = std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.measurements.energy_j; });
  if (energy) header.emplace_back("J/sample");

  const size_t columns = header.size();
  std::vector<std::vector<std::string>> rows = {std::move(header)};
  const size_t shown = max_rows == 0 ? runs.size() : std::min(runs.size(), max_rows);
  for (size_t i = 0; i < shown; ++i) {
    const RunRecord& r = runs[i];
    const std::string state = r.stopped_early ? "stopped early" : std::string(RunStateName(r.state));
    std::vector<std::string> row = {std::to_string(i + 1), std::to_string(r.index), r.key, state,
                                    std::to_string(r.attempts)};
    if (metric) {
      auto it = r.best_metrics.find(metric->name);
      row.push_back(it != r.best_metrics.end() && it->is_number() ? fmt::format("{:.6g}", it->get<double>()) : "");
    }
    for (const std::string& p : params) row.push_back(r.params.contains(p) ? PyStr(r.params[p]) : "");
    const Measurements& m = r.measurements;
    row.push_back(Optional(m.throughput_samples_per_s, "{:.1f}"));
    const std::optional<uint64_t> mem = m.peak_gpu_memory_bytes ? m.peak_gpu_memory_bytes : m.rss_bytes;
    row.push_back(mem ? FormatBytes(*mem) : "");
    row.push_back(Optional(m.cpu_pct, "{:.0f}"));
    if (energy) row.push_back(Optional(JoulesPerSample(m), "{:.4g}"));
    rows.push_back(std::move(row));
  }
  std::string out = TextTable(std::vector<TextColumn>(columns), rows);
  if (shown < runs.size()) out += fmt::format("... {} more (--all shows every run)\n", runs.size() - shown);
  return out;
}

std::string FormatStatus(const SweepStatus& s, size_t max_rows) {
  std::string out = fmt::format("journal {} (spec {}, plan {})\n{}\n", s.journal_path, s.sweep.spec_path,
                                s.sweep.spec_hash, CountsLine(s.counts));
  if (!s.problems.empty()) out += fmt::format("INCONSISTENT: {}\n", s.problems);
  if (s.staging) out += StagingText(*s.staging);
  out += ClockedText(s.clocked, s.clocked_packed);
  return out + "\n" + ResultsTable(s.runs, s.sweep.metric, max_rows);
}

nlohmann::json StatusJson(const SweepStatus& s) {
  nlohmann::json doc;
  doc["journal"] = s.journal_path;
  doc["spec"] = s.sweep.spec_path;
  doc["spec_hash"] = s.sweep.spec_hash;
  doc["seed"] = s.sweep.seed;
  doc["counts"] = CountsJson(s.counts);
  doc["consistent"] = s.problems.empty();
  doc["problems"] = s.problems.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.problems);
  const nlohmann::json results = ResultsJson(s.runs, s.sweep.metric);
  doc["metric"] = results["metric"];
  doc["runs"] = results["runs"];
  doc["staging"] = s.staging ? StagingJson(*s.staging) : nlohmann::json(nullptr);
  doc["clocked"] = s.clocked;  // shape -> why its runs are taken to stop on the clock
  return doc;
}

}  // namespace sat::sweep
