#include "sim/workload.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "util/json_text.h"
#include "util/range.h"
#include "util/strings.h"

namespace sat::sim {

namespace {

// SplitMix64 with our own uniform mapping: std:: distributions differ between standard libraries.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n).
  int Below(int n) { return std::min(n - 1, static_cast<int>(Uniform(0, n))); }

 private:
  uint64_t state_;
};

struct ConfigRange {
  const char* prefix;
  double mem_lo, mem_hi;  // shares of GPU memory
  double util_lo, util_hi;
  double duration_lo, duration_hi;
  int cores_lo, cores_hi;
  double startup_lo, startup_hi;
  double warmup_s;
};

constexpr ConfigRange kSmall = {"small", 0.04, 0.12, 0.15, 0.45, 900, 3600, 2, 4, 15, 45, 60};
constexpr ConfigRange kLarge = {"large", 0.30, 0.60, 0.85, 1.00, 3600, 14400, 6, 10, 30, 90, 120};

// One configuration's nominal run; its runs vary around it.
SimRun DrawConfig(const ConfigRange& range, int index, double gpu_mem_gib, Random& rng) {
  SimRun r;
  r.shape = fmt::format("{}-{}", range.prefix, index);
  r.mem_gib = rng.Uniform(range.mem_lo, range.mem_hi) * gpu_mem_gib;
  r.gpu_util = rng.Uniform(range.util_lo, range.util_hi);
  r.duration_s = rng.Uniform(range.duration_lo, range.duration_hi);
  r.cpu_cores = range.cores_lo + rng.Below(range.cores_hi - range.cores_lo + 1);
  r.startup_s = rng.Uniform(range.startup_lo, range.startup_hi);
  r.warmup_s = range.warmup_s;
  return r;
}

std::vector<SimRun> DrawConfigs(const ConfigRange& range, int count, double gpu_mem_gib, Random& rng) {
  std::vector<SimRun> configs;
  for (int i = 0; i < count; ++i) configs.push_back(DrawConfig(range, i, gpu_mem_gib, rng));
  return configs;
}

// --- JSON ---------------------------------------------------------------------------------------------

const std::vector<std::string>& FieldNames() {
  static const std::vector<std::string> names = {"id",       "shape",     "duration_s", "mem_gib",  "peak_gib",
                                                 "gpu_util", "cpu_cores", "startup_s",  "warmup_s", "count"};
  return names;
}

// Reads run entry `index` (one or more runs, by "count") into `out`.
Status ParseEntry(const nlohmann::json& entry, size_t index, std::vector<SimRun>* out) {
  auto bad = [&](std::string_view what) { return UsageError(fmt::format("runs[{}]: {}", index, what)); };
  if (!entry.is_object()) return bad("expected an object");
  for (const auto& [key, value] : entry.items()) {
    const auto& names = FieldNames();
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    std::string msg = fmt::format("unknown field \"{}\"", key);
    if (auto guess = ClosestMatch(key, names)) msg += fmt::format("; did you mean \"{}\"?", *guess);
    return bad(msg);
  }
  auto number = [&](const char* key, std::optional<double> fallback) -> Result<double> {
    auto it = entry.find(key);
    if (it == entry.end()) {
      if (fallback) return *fallback;
      return bad(fmt::format("missing \"{}\"", key));
    }
    if (!it->is_number()) return bad(fmt::format("\"{}\" must be a number", key));
    return it->get<double>();
  };
  auto text = [&](const char* key, std::string fallback) -> Result<std::string> {
    auto it = entry.find(key);
    if (it == entry.end()) return fallback;
    if (!it->is_string()) return bad(fmt::format("\"{}\" must be a string", key));
    return it->get<std::string>();
  };
  SimRun r;
  Result<std::string> id = text("id", fmt::format("run-{}", index));
  if (!id) return id.error();
  r.id = *id;
  Result<std::string> shape = text("shape", r.id);
  if (!shape) return shape.error();
  r.shape = *shape;
  // Each numeric field with its default (none: required).
  const std::pair<const char*, std::optional<double>> numbers[] = {
      {"duration_s", std::nullopt}, {"mem_gib", std::nullopt}, {"gpu_util", std::nullopt},
      {"cpu_cores", 1.0},           {"startup_s", 30.0},       {"warmup_s", 60.0}};
  double* fields[] = {&r.duration_s, &r.mem_gib, &r.gpu_util, &r.cpu_cores, &r.startup_s, &r.warmup_s};
  for (size_t i = 0; i < std::size(numbers); ++i) {
    Result<double> v = number(numbers[i].first, numbers[i].second);
    if (!v) return v.error();
    *fields[i] = *v;
  }
  Result<double> peak = number("peak_gib", r.mem_gib);
  if (!peak) return peak.error();
  r.peak_gib = *peak;
  Result<double> count = number("count", 1.0);
  if (!count) return count.error();
  if (*count < 1 || *count != std::floor(*count) || *count > 1e7) return bad("\"count\" must be an integer >= 1");
  if (*count == 1) {
    out->push_back(std::move(r));
    return Status::Ok();
  }
  for (long k = 0; k < static_cast<long>(*count); ++k) {
    out->push_back(r);
    out->back().id = fmt::format("{}#{}", r.id, k);
  }
  return Status::Ok();
}

nlohmann::ordered_json RunToJson(const SimRun& r) {
  return nlohmann::ordered_json{{"id", r.id},
                                {"shape", r.shape},
                                {"duration_s", r.duration_s},
                                {"mem_gib", r.mem_gib},
                                {"peak_gib", r.peak_gib},
                                {"gpu_util", r.gpu_util},
                                {"cpu_cores", r.cpu_cores},
                                {"startup_s", r.startup_s},
                                {"warmup_s", r.warmup_s}};
}

}  // namespace

Status ValidateSpec(const WorkloadSpec& spec) {
  return CheckAllInRange({{"runs", static_cast<double>(spec.runs), AtLeast(0)},
                          {"large fraction", spec.large_fraction, Closed(0, 1)},
                          {"small configs", static_cast<double>(spec.small_configs), AtLeast(1)},
                          {"large configs", static_cast<double>(spec.large_configs), AtLeast(1)},
                          {"GPU memory (GiB)", spec.gpu_mem_gib, Above(0)}});
}

std::vector<SimRun> GenerateWorkload(const WorkloadSpec& spec) {
  Random rng(spec.seed);
  std::vector<SimRun> small = DrawConfigs(kSmall, spec.small_configs, spec.gpu_mem_gib, rng);
  std::vector<SimRun> large = DrawConfigs(kLarge, spec.large_configs, spec.gpu_mem_gib, rng);
  std::vector<int> drawn_small(small.size(), 0);
  std::vector<int> drawn_large(large.size(), 0);
  std::vector<SimRun> runs;
  runs.reserve(spec.runs);
  for (int i = 0; i < spec.runs; ++i) {
    bool is_large = rng.Uniform(0, 1) < spec.large_fraction;
    std::vector<SimRun>& configs = is_large ? large : small;
    int c = rng.Below(static_cast<int>(configs.size()));
    int& serial = (is_large ? drawn_large : drawn_small)[c];
    SimRun r = configs[c];
    r.id = fmt::format("{}#{}", r.shape, serial++);
    r.mem_gib = std::min(spec.gpu_mem_gib, r.mem_gib * rng.Uniform(0.97, 1.03));
    r.peak_gib = std::min(spec.gpu_mem_gib, r.mem_gib * rng.Uniform(1.0, 1.06));
    r.duration_s *= rng.Uniform(0.9, 1.1);
    runs.push_back(std::move(r));
  }
  return runs;
}

Result<std::vector<SimRun>> ParseRuns(std::string_view json_text) {
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return UsageError("not valid JSON");
  const nlohmann::json* list = &doc;
  if (doc.is_object()) {
    auto it = doc.find("runs");
    if (it == doc.end() || doc.size() != 1) return UsageError("expected an object with only a \"runs\" array");
    list = &*it;
  }
  if (!list->is_array()) return UsageError("expected an array of runs, or {\"runs\": [...]}");
  std::vector<SimRun> runs;
  for (size_t i = 0; i < list->size(); ++i) {
    if (Status st = ParseEntry((*list)[i], i, &runs); !st) return st.error();
  }
  return runs;
}

Result<std::vector<SimRun>> LoadRuns(const std::string& path) {
  std::ifstream in(path);
  if (!in) return UsageError(fmt::format("{}: cannot open", path));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return UsageError(fmt::format("{}: cannot read", path));
  Result<std::vector<SimRun>> runs = ParseRuns(text.str());
  if (!runs) return UsageError(fmt::format("{}: {}", path, runs.error().message));
  return runs;
}

std::string RunsToJson(const std::vector<SimRun>& runs) {
  std::string out = "{\"runs\": [\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    out += "  " + JsonText(RunToJson(runs[i]));
    out += i + 1 < runs.size() ? ",\n" : "\n";
  }
  return out + "]}\n";
}

}  // namespace sat::sim
