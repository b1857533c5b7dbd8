#include "tune/trial.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/energy.h"
#include "core/mfu.h"
#include "core/stage_costs.h"
#include "util/json_text.h"

namespace sat::tune {

using nlohmann::json;

bool TrialRequest::SameMeasurement(const TrialRequest& o) const {
  if (mode != o.mode || knobs != o.knobs || repeat != o.repeat || flags.size() != o.flags.size()) return false;
  for (const auto& [name, flag] : flags)
    if (!o.flags.count(name)) return false;
  return true;
}

const KnobValue* EffectiveKnob(const Trial& t, const std::string& name) {
  if (auto set = t.request.knobs.find(name); set != t.request.knobs.end()) return &set->second;
  if (auto seen = t.knobs_seen.find(name); seen != t.knobs_seen.end()) return &seen->second;
  return nullptr;
}

std::string KnobNotApplied(const Trial& t) {
  for (const auto& [name, why] : t.knob_errors) {
    auto sent = t.request.knobs.find(name);
    if (sent != t.request.knobs.end())
      return fmt::format("{}={} could not be set: {}", name, ValueText(sent->second), why);
  }
  return "";
}

bool Succeeded(const Trial& t) {
  if (t.interrupted || t.samples_per_s <= 0 || !KnobNotApplied(t).empty()) return false;
  switch (t.exit_class) {
    case run::ExitClass::kFinished:
    case run::ExitClass::kStopped:
    case run::ExitClass::kTimedOut: return true;
    default: return false;
  }
}

std::string FailureText(const Trial& t) {
  if (t.exit_class == run::ExitClass::kGpuOom) return "ran out of GPU memory";
  if (t.exit_class == run::ExitClass::kHostOom) return "ran out of host memory";
  if (std::string why = KnobNotApplied(t); !why.empty()) return "did not run as asked: " + why;
  if (t.too_slow && t.samples_per_s <= 0)
    return "was too slow to measure in this budget (no step finished after the first)";
  if (Succeeded(t) || t.samples_per_s > 0 || !t.detail.empty())
    return fmt::format("failed ({}: {})", run::ExitClassName(t.exit_class), t.detail);
  return fmt::format("failed ({})", run::ExitClassName(t.exit_class));
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

namespace {

// The searched knob a reported name stands for: the knob of that name; for the automatic layer's names
// ("workers", "batch_size", "amp", ...) also the knob with the same role, so `--knob num_workers=0:8` matches.
const KnobSpec* SpecFor(const std::vector<KnobSpec>& knobs, const std::string& name, bool automatic) {
  if (const KnobSpec* k = FindKnob(knobs, name)) return k;
  const KnobRole role = RoleOf(name);
  return automatic && role != KnobRole::kOther ? FindRole(knobs, role) : nullptr;
}

// A Student t interval needs a few batches; fewer than this gives too few degrees of freedom to trust.
constexpr int kMinSettledBatches = 5;

// Converged, or a steady part with a valid interval: the early-stop rule's minimum length and target width guard
// against stopping on a lucky streak, which a trial that ran to its end did not do.
bool Settled(const measure::SteadyState& e) {
  return e.converged || (std::isfinite(e.rel_half_width) && !e.drift && !e.warmup_at_limit &&
                         e.n_batches >= kMinSettledBatches);
}

// Training steps in the steady part: the steady samples over the helper's samples per step; for parsed lines,
// each steady line is one step (a rate line stands for the steps of its window, counted as one).
int SteadySteps(const core::StageResult& s) {
  const measure::SteadyState& e = s.estimate;
  if (s.totals.steps > 0 && s.totals.samples > 0 && e.samples_per_s > 0 && e.steady_s > 0)
    return static_cast<int>(e.samples_per_s * e.steady_s / (s.totals.samples / static_cast<double>(s.totals.steps)));
  return static_cast<int>(e.observations_used);
}

}  // namespace

Trial TrialFromStage(const core::StageResult& s, const std::vector<KnobSpec>& knobs,
                     std::optional<double> host_mem_total_bytes) {
  Trial t;
  t.exit_class = s.outcome.exit_class;
  t.detail = s.outcome.detail;
  t.helper_seen = s.helper_seen;
  t.torch_loaded = s.torch_loaded.value_or(false);
  t.auto_seen = s.auto_seen;
  // The script's own knobs first: when it reads a knob itself, that is what it gets.
  for (bool automatic : {false, true}) {
    for (const auto& [name, value] : s.knobs_seen) {
      if ((s.knobs_auto.count(name) > 0) != automatic) continue;
      const KnobSpec* spec = SpecFor(knobs, name, automatic);
      if (!spec || (automatic && t.knobs_seen.count(spec->name))) continue;
      if (auto v = NormalizeValue(*spec, value)) {
        t.knobs_seen[spec->name] = *v;
        if (automatic) t.knobs_auto.insert(spec->name);
      }
    }
  }
  for (const auto& [name, why] : s.knob_errors)
    if (const KnobSpec* spec = SpecFor(knobs, name, true)) t.knob_errors[spec->name] = why;
  for (const auto& [name, flag] : s.knob_flags)
    if (const KnobSpec* spec = SpecFor(knobs, name, false)) t.knob_flags[spec->name] = flag;
  t.script_flags = s.flags;
  if (s.loader) {
    t.loader_key = s.loader->key.value_or("");
    t.loader_site = s.loader->site.value_or("");
  }
  t.world_size = s.world_size;
  t.samples_per_s = s.estimate.samples_per_s;
  if (std::isfinite(s.estimate.ci_low)) t.ci_low = s.estimate.ci_low;
  if (std::isfinite(s.estimate.ci_high)) t.ci_high = s.estimate.ci_high;
  t.converged = s.estimate.converged;
  t.settled = Settled(s.estimate);
  if (!t.settled) {
    const measure::SteadyState& e = s.estimate;
    t.unsettled_why = e.drift             ? "still drifting"
                      : e.warmup_at_limit ? "its warm-up did not end"
                                          : fmt::format("{} batch{} of steady data", e.n_batches,
                                                        e.n_batches == 1 ? "" : "es");
  }
  t.observations = static_cast<int>(s.observations);
  t.steady_steps = SteadySteps(s);
  t.warmup_s = s.estimate.warmup_s;
  t.steady_s = s.estimate.steady_s;
  t.wall_s = s.wall_s;
  t.series = Thin(s.series, kMaxSeriesPoints);

  const core::StageTelemetry& tel = s.telemetry;
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
  t.flops = s.flops;
  if (tel.gpu_pcie_rx_bytes_per_s && tel.gpu_pcie_rx_bytes_per_s->count > 0) {
    t.pcie_rx_bytes_per_s = tel.gpu_pcie_rx_bytes_per_s->mean;
  }
  if (std::optional<core::EnergyPerSample> e = core::EnergyPerSampleOf(s)) {
    t.joules_per_sample = e->joules_per_sample;
    t.watts = e->watts;
    t.energy_method = e->method;
  }
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

std::optional<core::StageKind> ParseStageKind(std::string_view name) {
  using core::StageKind;
  for (StageKind k : {StageKind::kLoader, StageKind::kCompute, StageKind::kFull})
    if (core::StageName(k) == name) return k;
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
  json script_flags = json::array();
  for (const auto& o : t.script_flags) script_flags.push_back(measure::FlagOptionJson(o));
  json set_by_flags = json::object();
  for (const auto& [name, flag] : t.request.flags) set_by_flags[name] = flag.option;
  return {
      {"id", t.id},
      {"step", t.request.step},
      {"mode", core::StageName(t.request.mode)},
      {"knobs", t.request.knobs},
      {"set_by_flags", set_by_flags},
      {"repeat", t.request.repeat},
      {"cached", t.cached},
      {"interrupted", t.interrupted},
      {"exit_class", run::ExitClassName(t.exit_class)},
      {"detail", t.detail},
      {"helper_seen", t.helper_seen},
      {"knobs_seen", t.knobs_seen},
      {"auto_seen", t.auto_seen},
      {"knobs_auto", t.knobs_auto},
      {"knob_errors", t.knob_errors},
      {"loader_key", t.loader_key},
      {"loader_site", t.loader_site},
      {"world_size", t.world_size},
      {"script_flags", script_flags},
      {"knob_flags", t.knob_flags},
      {"samples_per_s", t.samples_per_s},
      {"ci_low", t.ci_low},
      {"ci_high", t.ci_high},
      {"converged", t.converged},
      {"settled", t.settled},
      {"unsettled_why", t.unsettled_why},
      {"observations", t.observations},
      {"steady_steps", t.steady_steps},
      {"too_slow", t.too_slow},
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
      {"flops", core::FlopsInfoJson(t.flops)},
      {"joules_per_sample", Optional(t.joules_per_sample)},
      {"watts", Optional(t.watts)},
      {"energy_method", t.energy_method},
      {"pcie_rx_bytes_per_s", Optional(t.pcie_rx_bytes_per_s)},
      {"started_unix", t.started_unix},
  };
}

Result<Trial> TrialFromJson(const json& j) {
  try {
    Trial t;
    t.id = j.value("id", 0);
    t.request.step = j.at("step").get<std::string>();
    auto mode = ParseStageKind(j.at("mode").get<std::string>());
    if (!mode) return Error{"trial: unknown mode " + JsonText(j.at("mode"))};
    t.request.mode = *mode;
    t.request.knobs = j.at("knobs").get<KnobValues>();
    t.request.repeat = j.value("repeat", 0);
    t.cached = j.value("cached", false);
    t.interrupted = j.value("interrupted", false);
    auto ec = ParseExitClass(j.at("exit_class").get<std::string>());
    if (!ec) return Error{"trial: unknown exit class " + JsonText(j.at("exit_class"))};
    t.exit_class = *ec;
    t.detail = j.value("detail", "");
    t.helper_seen = j.value("helper_seen", false);
    t.knobs_seen = j.value("knobs_seen", KnobValues{});
    t.auto_seen = j.value("auto_seen", false);
    t.knobs_auto = j.value("knobs_auto", std::set<std::string>{});
    t.knob_errors = j.value("knob_errors", std::map<std::string, std::string>{});
    t.loader_key = j.value("loader_key", "");
    t.loader_site = j.value("loader_site", "");
    t.world_size = j.value("world_size", int64_t{1});
    for (const auto& o : j.value("script_flags", json::array())) {
      auto option = measure::FlagOptionFromJson(o);
      if (!option) return Error{"trial: script_flags: " + option.error().message};
      t.script_flags.push_back(std::move(*option));
    }
    t.knob_flags = j.value("knob_flags", std::map<std::string, std::string>{});
    t.samples_per_s = j.at("samples_per_s").get<double>();
    t.ci_low = j.value("ci_low", 0.0);
    t.ci_high = j.value("ci_high", 0.0);
    t.converged = j.value("converged", false);
    t.settled = j.value("settled", false);
    t.unsettled_why = j.value("unsettled_why", "");
    t.observations = j.value("observations", 0);
    t.steady_steps = j.value("steady_steps", 0);
    t.too_slow = j.value("too_slow", false);
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
    if (auto flops = j.find("flops"); flops != j.end()) t.flops = core::FlopsInfoFromJson(*flops);
    t.joules_per_sample = ReadOptional(j, "joules_per_sample");
    t.watts = ReadOptional(j, "watts");
    t.energy_method = j.value("energy_method", "");
    t.pcie_rx_bytes_per_s = ReadOptional(j, "pcie_rx_bytes_per_s");
    t.started_unix = j.value("started_unix", 0.0);
    return t;
  } catch (const json::exception& e) {
    return Error{std::string("trial: ") + e.what()};
  }
}

}  // namespace sat::tune
