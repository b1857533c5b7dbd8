#include "tune/trial.h"

#include <algorithm>
#include <cmath>

namespace sat::tune {

using nlohmann::json;

bool TrialRequest::SameMeasurement(const TrialRequest& o) const {
  return mode == o.mode && knobs == o.knobs && repeat == o.repeat;
}

const KnobValue* EffectiveKnob(const Trial& t, const std::string& name) {
  if (auto set = t.request.knobs.find(name); set != t.request.knobs.end()) return &set->second;
  if (auto seen = t.knobs_seen.find(name); seen != t.knobs_seen.end()) return &seen->second;
  return nullptr;
}

bool Succeeded(const Trial& t) {
  if (t.interrupted || t.samples_per_s <= 0) return false;
  switch (t.exit_class) {
    case run::ExitClass::kFinished:
    case run::ExitClass::kStopped:
    case run::ExitClass::kTimedOut: return true;
    default: return false;
  }
}

bool OutOfMemory(const Trial& t) {
  return t.exit_class == run::ExitClass::kGpuOom || t.exit_class == run::ExitClass::kHostOom;
}

std::optional<double> MemoryShare(const Trial& t) {
  if (!t.mem_peak_bytes || !t.mem_total_bytes || *t.mem_total_bytes <= 0) return std::nullopt;
  return *t.mem_peak_bytes / *t.mem_total_bytes;
}

bool OverMemoryTarget(const Trial& t, double target) {
  auto share = MemoryShare(t);
  return share && *share > target;
}

std::vector<measure::RatePoint> Thin(const std::vector<measure::RatePoint>& series, size_t max_points) {
  if (series.size() <= max_points || max_points == 0) return series;
  std::vector<measure::RatePoint> out;
  const size_t group = (series.size() + max_points - 1) / max_points;
  for (size_t i = 0; i < series.size(); i += group) {
    size_t end = std::min(series.size(), i + group);
    measure::RatePoint p;
    for (size_t k = i; k < end; ++k) {
      p.t_s += series[k].t_s;
      p.samples_per_s += series[k].samples_per_s;
    }
    p.t_s /= static_cast<double>(end - i);
    p.samples_per_s /= static_cast<double>(end - i);
    out.push_back(p);
  }
  return out;
}

Trial TrialFromStage(const probe::StageResult& s, const std::vector<KnobSpec>& knobs,
                     std::optional<double> host_mem_total_bytes) {
  Trial t;
  t.exit_class = s.outcome.exit_class;
  t.detail = s.outcome.detail;
  t.helper_seen = s.helper_seen;
  for (const auto& [name, value] : s.knobs_seen) {
    const KnobSpec* spec = FindKnob(knobs, name);
    if (!spec) continue;
    if (auto v = NormalizeValue(*spec, value)) t.knobs_seen[name] = *v;
  }
  t.samples_per_s = s.estimate.samples_per_s;
  if (std::isfinite(s.estimate.ci_low)) t.ci_low = s.estimate.ci_low;
  if (std::isfinite(s.estimate.ci_high)) t.ci_high = s.estimate.ci_high;
  t.converged = s.estimate.converged;
  t.warmup_s = s.estimate.warmup_s;
  t.steady_s = s.estimate.steady_s;
  t.wall_s = s.wall_s;
  t.series = Thin(s.series, kMaxSeriesPoints);

  const probe::StageTelemetry& tel = s.telemetry;
  if (tel.gpu_mem_total_bytes) {
    t.mem_is_gpu = true;
    t.mem_total_bytes = tel.gpu_mem_total_bytes;
    // The tree's own GPU memory when NVML lists it; else what the helper saw reserved; else the whole device.
    if (tel.tree_gpu_mem_bytes) t.mem_peak_bytes = tel.tree_gpu_mem_bytes->max;
    else if (s.totals.mem_reserved_bytes) t.mem_peak_bytes = static_cast<double>(*s.totals.mem_reserved_bytes);
    else if (tel.gpu_mem_used_bytes) t.mem_peak_bytes = tel.gpu_mem_used_bytes->max;
  } else {
    t.mem_total_bytes = host_mem_total_bytes;
    if (tel.tree_rss_bytes) t.mem_peak_bytes = tel.tree_rss_bytes->max;
  }
  if (tel.gpu_util_pct) t.gpu_util_pct = tel.gpu_util_pct->p50;
  if (tel.tree_cpu_pct) {
    t.cpu_pct = tel.tree_cpu_pct->p50;
    t.cpu_pct_p95 = tel.tree_cpu_pct->p95;
  }
  if (tel.tree_rss_bytes) t.rss_peak_bytes = tel.tree_rss_bytes->max;
  t.data_wait_share = s.data_wait_share;
  return t;
}

std::optional<run::ExitClass> ParseExitClass(std::string_view name) {
  using run::ExitClass;
  for (ExitClass c : {ExitClass::kFinished, ExitClass::kFailed, ExitClass::kStopped, ExitClass::kTimedOut,
                      ExitClass::kGpuOom, ExitClass::kHostOom, ExitClass::kWorkerKilled, ExitClass::kStartFailed}) {
    if (run::ExitClassName(c) == name) return c;
  }
  return std::nullopt;
}

std::optional<probe::StageKind> ParseStageKind(std::string_view name) {
  using probe::StageKind;
  for (StageKind k : {StageKind::kLoader, StageKind::kCompute, StageKind::kFull})
    if (probe::StageName(k) == name) return k;
  return std::nullopt;
}

namespace {

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> ReadOptional(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

json TrialToJson(const Trial& t) {
  json series = json::array();
  for (const auto& p : t.series) series.push_back({p.t_s, p.samples_per_s});
  return {
      {"id", t.id},
      {"step", t.request.step},
      {"mode", probe::StageName(t.request.mode)},
      {"knobs", t.request.knobs},
      {"repeat", t.request.repeat},
      {"cached", t.cached},
      {"interrupted", t.interrupted},
      {"exit_class", run::ExitClassName(t.exit_class)},
      {"detail", t.detail},
      {"helper_seen", t.helper_seen},
      {"knobs_seen", t.knobs_seen},
      {"samples_per_s", t.samples_per_s},
      {"ci_low", t.ci_low},
      {"ci_high", t.ci_high},
      {"converged", t.converged},
      {"warmup_s", t.warmup_s},
      {"steady_s", t.steady_s},
      {"wall_s", t.wall_s},
      {"series", series},
      {"mem_peak_bytes", Optional(t.mem_peak_bytes)},
      {"mem_total_bytes", Optional(t.mem_total_bytes)},
      {"mem_is_gpu", t.mem_is_gpu},
      {"gpu_util_pct", Optional(t.gpu_util_pct)},
      {"cpu_pct", Optional(t.cpu_pct)},
      {"cpu_pct_p95", Optional(t.cpu_pct_p95)},
      {"rss_peak_bytes", Optional(t.rss_peak_bytes)},
      {"data_wait_share", Optional(t.data_wait_share)},
      {"started_unix", t.started_unix},
  };
}

Result<Trial> TrialFromJson(const json& j) {
  try {
    Trial t;
    t.id = j.value("id", 0);
    t.request.step = j.at("step").get<std::string>();
    auto mode = ParseStageKind(j.at("mode").get<std::string>());
    if (!mode) return Error{"trial: unknown mode " + j.at("mode").dump()};
    t.request.mode = *mode;
    t.request.knobs = j.at("knobs").get<KnobValues>();
    t.request.repeat = j.value("repeat", 0);
    t.cached = j.value("cached", false);
    t.interrupted = j.value("interrupted", false);
    auto ec = ParseExitClass(j.at("exit_class").get<std::string>());
    if (!ec) return Error{"trial: unknown exit class " + j.at("exit_class").dump()};
    t.exit_class = *ec;
    t.detail = j.value("detail", "");
    t.helper_seen = j.value("helper_seen", false);
    t.knobs_seen = j.value("knobs_seen", KnobValues{});
    t.samples_per_s = j.at("samples_per_s").get<double>();
    t.ci_low = j.value("ci_low", 0.0);
    t.ci_high = j.value("ci_high", 0.0);
    t.converged = j.value("converged", false);
    t.warmup_s = j.value("warmup_s", 0.0);
    t.steady_s = j.value("steady_s", 0.0);
    t.wall_s = j.value("wall_s", 0.0);
    for (const auto& p : j.value("series", json::array()))
      t.series.push_back({p.at(0).get<double>(), p.at(1).get<double>()});
    t.mem_peak_bytes = ReadOptional(j, "mem_peak_bytes");
    t.mem_total_bytes = ReadOptional(j, "mem_total_bytes");
    t.mem_is_gpu = j.value("mem_is_gpu", false);
    t.gpu_util_pct = ReadOptional(j, "gpu_util_pct");
    t.cpu_pct = ReadOptional(j, "cpu_pct");
    t.cpu_pct_p95 = ReadOptional(j, "cpu_pct_p95");
    t.rss_peak_bytes = ReadOptional(j, "rss_peak_bytes");
    t.data_wait_share = ReadOptional(j, "data_wait_share");
    t.started_unix = j.value("started_unix", 0.0);
    return t;
  } catch (const json::exception& e) {
    return Error{std::string("trial: ") + e.what()};
  }
}

}  // namespace sat::tune
