// The journal's results for reports: ordering by the sweep metric, CSV and JSON (declared in sweep/export.h).
#include "sweep/export.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <type_traits>

namespace sat::sweep {
namespace {

std::optional<double> MetricOf(const RunRecord& r, const std::optional<MetricSpec>& metric) {
  if (!metric) return std::nullopt;
  auto it = r.best_metrics.find(metric->name);
  if (it == r.best_metrics.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string CsvCell(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

template <class T>
std::string Cell(const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_floating_point_v<T>) return PyFloatRepr(*v);
  return std::to_string(*v);
}

template <class T>
nlohmann::json JsonOrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<RunRecord> SortByMetric(std::vector<RunRecord> runs, const std::optional<MetricSpec>& metric) {
  std::stable_sort(runs.begin(), runs.end(), [&](const RunRecord& a, const RunRecord& b) {
    const auto va = MetricOf(a, metric), vb = MetricOf(b, metric);
    if (va.has_value() != vb.has_value()) return va.has_value();
    if (va && *va != *vb) return metric->goal == Goal::kMinimize ? *va < *vb : *va > *vb;
    return a.index < b.index;
  });
  return runs;
}

std::string ResultsCsv(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric) {
  std::set<std::string> params, others;
  for (const auto& r : runs) {
    for (const auto& [name, value] : r.params.items()) params.insert(name);
    for (const auto& [name, value] : r.best_metrics.items()) {
      if (!metric || name != metric->name) others.insert(name);
    }
  }
  std::vector<std::string> header = {"rank", "key", "index", "state", "stopped_early", "attempts"};
  if (metric) header.push_back("metric." + metric->name);
  for (const auto& p : params) header.push_back("param." + p);
  for (const auto& m : others) header.push_back("metric." + m);
  for (const char* c : {"throughput_samples_per_s", "peak_gpu_memory_bytes", "cpu_pct", "rss_bytes", "gpu",
                        "started_unix", "finished_unix", "samples", "energy_j", "joules_per_sample"}) {
    header.emplace_back(c);
  }
  auto write_row = [](const std::vector<std::string>& cells, std::string* out) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) *out += ',';
      *out += CsvCell(cells[i]);
    }
    *out += "\r\n";
  };
  std::string out;
  write_row(header, &out);
  int64_t rank = 0;
  for (const auto& r : runs) {
    std::vector<std::string> row = {std::to_string(++rank), r.key, std::to_string(r.index),
                                    std::string(RunStateName(r.state)), r.stopped_early ? "true" : "false",
                                    std::to_string(r.attempts)};
    if (metric) row.push_back(Cell(MetricOf(r, metric)));
    for (const auto& p : params) row.push_back(r.params.contains(p) ? PyStr(r.params[p]) : "");
    for (const auto& m : others) {
      auto it = r.best_metrics.find(m);
      row.push_back(it != r.best_metrics.end() && it->is_number() ? PyFloatRepr(it->get<double>()) : "");
    }
    const Measurements& ms = r.measurements;
    for (const std::string& cell :
         {Cell(ms.throughput_samples_per_s), Cell(ms.peak_gpu_memory_bytes), Cell(ms.cpu_pct), Cell(ms.rss_bytes),
          Cell(r.gpu_index), Cell(r.started_unix), Cell(r.finished_unix), Cell(ms.samples), Cell(ms.energy_j),
          Cell(JoulesPerSample(ms))}) {
      row.push_back(cell);
    }
    write_row(row, &out);
  }
  return out;
}

nlohmann::json ResultsJson(const std::vector<RunRecord>& runs, const std::optional<MetricSpec>& metric) {
  nlohmann::json out;
  out["metric"] = metric ? nlohmann::json{{"name", metric->name}, {"goal", GoalName(metric->goal)}} : nullptr;
  out["runs"] = nlohmann::json::array();
  int64_t rank = 0;
  for (const auto& r : runs) {
    const Measurements& ms = r.measurements;
    out["runs"].push_back({{"rank", ++rank},
                           {"key", r.key},
                           {"index", r.index},
                           {"state", RunStateName(r.state)},
                           {"stopped_early", r.stopped_early},
                           {"attempts", r.attempts},
                           {"failures", r.failures},
                           {"params", r.params},
                           {"metrics", r.best_metrics},
                           {"throughput_samples_per_s", JsonOrNull(ms.throughput_samples_per_s)},
                           {"peak_gpu_memory_bytes", JsonOrNull(ms.peak_gpu_memory_bytes)},
                           {"cpu_pct", JsonOrNull(ms.cpu_pct)},
                           {"rss_bytes", JsonOrNull(ms.rss_bytes)},
                           {"gpu", JsonOrNull(r.gpu_index)},
                           {"started_unix", JsonOrNull(r.started_unix)},
                           {"finished_unix", JsonOrNull(r.finished_unix)},
                           {"samples", JsonOrNull(ms.samples)},
                           {"energy_j", JsonOrNull(ms.energy_j)},
                           {"joules_per_sample", JsonOrNull(JoulesPerSample(ms))}});
  }
  return out;
}

}  // namespace sat::sweep
