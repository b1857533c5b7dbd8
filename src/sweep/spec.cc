#include "sweep/spec.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <new>
#include <optional>
#include <set>
#include <tuple>

#include "sweep/metric_pattern.h"
#include "sweep/spec_reader.h"
#include "util/bytes.h"
#include "util/json_text.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

// What the parser does with each top-level key of a W&B sweep file.
enum class KeyUse { kRead, kIgnored, kWarned, kRefused };
struct TopKey {
  std::string_view name;
  KeyUse use;
  std::string_view note;  // kWarned: the warning; kRefused: the error
};
constexpr TopKey kTopKeys[] = {
    {"program", KeyUse::kRead, ""},
    {"method", KeyUse::kRead, ""},
    {"parameters", KeyUse::kRead, ""},
    {"command", KeyUse::kRead, ""},
    {"metric", KeyUse::kRead, ""},
    {"run_cap", KeyUse::kRead, ""},
    {"name", KeyUse::kRead, ""},
    {"description", KeyUse::kRead, ""},
    {"saturate", KeyUse::kRead, ""},
    {"project", KeyUse::kIgnored, ""},
    {"entity", KeyUse::kIgnored, ""},
    {"apiVersion", KeyUse::kIgnored, ""},
    {"kind", KeyUse::kIgnored, ""},
    {"controller", KeyUse::kIgnored, ""},
    {"early_terminate", KeyUse::kRead, ""},
    {"job", KeyUse::kRefused, "W&B Launch jobs are not supported; give 'program' (and 'command') instead"},
    {"image_uri", KeyUse::kRefused, "W&B Launch images are not supported; give 'program' (and 'command') instead"},
    {"metrics", KeyUse::kRefused, "several 'metrics' (multi-objective search) are not supported; give one 'metric'"},
    {"scheduler", KeyUse::kRefused, "'scheduler' (optuna, ax) is not supported; use method grid, random or bayes"},
};

const std::vector<std::string> kParameterKeys = {"value", "values", "distribution", "probabilities", "min",
                                                 "max",   "q",      "mu",           "sigma",         "parameters"};
const std::vector<std::string> kEarlyTerminateKeys = {"type", "min_iter", "max_iter", "s", "eta", "strict"};
const std::vector<std::string> kMetricKeys = {"name", "goal", "target", "impute", "impute_while_running"};
// W&B's rule for parameter names: ^[A-Za-z_][A-Za-z0-9_.-]*$.
bool IsValidName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; });
}

// What a spec may be. W&B's specs are a few kilobytes; these refuse a file built to exhaust memory before anything
// is expanded: YAML aliases share one node, so nine nested anchors of ten items each (under 1 KB) expand to 10^9
// values when converted, and a spec nested hundreds deep is a recursion, not a sweep.
constexpr size_t kMaxSpecBytes = size_t{1} << 20;
constexpr size_t kMaxSpecNodes = 100000;  // as expanded: an alias counts each time it is used
constexpr int kMaxSpecDepth = 64;

// Walks `n` as the conversion to JSON would expand it, stopping at the first cap it passes; the problem, if any.
std::optional<std::string> CheckExpansion(const YAML::Node& n, int depth, size_t* nodes, std::string_view source) {
  if (++*nodes > kMaxSpecNodes) {
    return fmt::format("{}: the spec expands to more than {} values (an alias counts each time it is used); a spec "
                       "may hold at most {}",
                       SpecPlace(source, n.Mark()), kMaxSpecNodes, kMaxSpecNodes);
  }
  if (depth > kMaxSpecDepth) {
    return fmt::format("{}: the spec nests more than {} levels deep; a spec may nest at most {}", SpecPlace(source, n.Mark()),
                       kMaxSpecDepth, kMaxSpecDepth);
  }
  if (n.IsSequence()) {
    for (const auto& item : n) {
      if (auto bad = CheckExpansion(item, depth + 1, nodes, source)) return bad;
    }
  } else if (n.IsMap()) {
    for (const auto& kv : n) {
      if (auto bad = CheckExpansion(kv.first, depth + 1, nodes, source)) return bad;
      if (auto bad = CheckExpansion(kv.second, depth + 1, nodes, source)) return bad;
    }
  }
  return std::nullopt;
}

// Keeps the first of equal values (W&B's grid search visits each distinct value once).
std::vector<nlohmann::json> Distinct(const std::vector<nlohmann::json>& values) {
  std::vector<nlohmann::json> out;
  std::set<std::string> seen;
  for (const auto& v : values) {
    if (seen.insert(JsonText(v)).second) out.push_back(v);
  }
  return out;
}

class Parser : public SpecReader {
 public:
  explicit Parser(std::string_view source) : SpecReader(source) { spec_.source = source_; }

  Result<Spec> Run(const YAML::Node& root) {
    if (!ParseTop(root)) return *error();
    return std::move(spec_);
  }

 private:
  bool ParseTop(const YAML::Node& root) {
    if (!root.IsDefined() || root.IsNull()) return Fail(YAML::Mark::null_mark(), "", "the sweep spec is empty");
    if (!ExpectMap(root, "", "keys (program, method, parameters, ...)")) return false;
    std::vector<std::string> names;
    for (const auto& k : kTopKeys) names.emplace_back(k.name);
    if (!CheckKeys(root, "", names)) return false;
    for (const auto& kv : root) {
      const auto* key = std::find_if(std::begin(kTopKeys), std::end(kTopKeys),
                                     [&](const TopKey& k) { return k.name == kv.first.Scalar(); });
      if (key->use == KeyUse::kRefused) return Fail(kv.first, "", key->note);
      if (key->use == KeyUse::kWarned) spec_.warnings.emplace_back(key->note);
    }
    if (root["name"] && !ReadString(root["name"], "name", &spec_.name)) return false;
    if (root["description"] && !ReadString(root["description"], "description", &spec_.description)) return false;
    if (root["program"] && !ReadString(root["program"], "program", &spec_.program)) return false;
    if (!ParseMethod(root["method"])) return false;
    if (!root["parameters"]) return Fail(YAML::Mark::null_mark(), "", "'parameters' is missing");
    if (!ParseParameters(root["parameters"], "", "parameters")) return false;
    if (!ParseCommand(root["command"])) return false;
    if (root["metric"] && !ParseMetric(root["metric"])) return false;
    if (root["run_cap"]) {
      int64_t cap = 0;
      if (!ReadInteger(root["run_cap"], "", "run_cap", 1, &cap)) return false;
      spec_.run_cap = cap;
      run_cap_mark_ = root["run_cap"].Mark();
    }
    if (const YAML::Node saturate = root["saturate"]) {
      auto parsed = ParseSaturateSpec(saturate, source_, &runs_mark_);
      if (!parsed) return Fail(parsed.error());
      spec_.saturate = std::move(*parsed);
    }
    if (root["early_terminate"] && !ParseEarlyTerminate(root["early_terminate"])) return false;
    return CheckPlan();
  }

  bool ParseMethod(const YAML::Node& n) {
    if (!n) return Fail(YAML::Mark::null_mark(), "", "'method' is missing; use grid, random or bayes");
    std::string method;
    if (!ReadString(n, "method", &method)) return false;
    method_mark_ = n.Mark();
    if (method == "grid") {
      spec_.method = Method::kGrid;
    } else if (method == "random") {
      spec_.method = Method::kRandom;
    } else if (method == "bayes") {
      spec_.method = Method::kBayes;
    } else if (method == "custom") {
      return Fail(n, "", "method 'custom' is not supported; use grid, random or bayes");
    } else {
      return Fail(n, "",
                  fmt::format("unknown method '{}'{}", method, DidYouMean(method, {"grid", "random", "bayes"})));
    }
    return true;
  }

  // `prefix` is the flattened name of the enclosing parameter plus a dot ("optimizer."), empty at the top.
  bool ParseParameters(const YAML::Node& map, const std::string& prefix, const std::string& path) {
    if (!ExpectMap(map, path, "parameter names to their settings")) return false;
    if (map.size() == 0) return Fail(map, path, "needs at least one parameter");
    if (!CheckUnique(map, path)) return false;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      const std::string name = prefix + key;
      if (!IsValidName(key)) {
        return Fail(kv.first, path,
                    fmt::format("'{}' is not a valid parameter name: use letters, digits, '_', "
                                "'.' and '-', starting with a letter or '_'",
                                key));
      }
      const std::string here = "parameters." + name;
      if (!ExpectMap(kv.second, here, "settings (value, values, distribution, min, max, ...)")) return false;
      if (kv.second["parameters"]) {
        if (!CheckKeys(kv.second, here, {"parameters"})) return false;
        if (!ParseParameters(kv.second["parameters"], name + ".", here)) return false;
        continue;
      }
      if (!ParseParameter(kv.second, name, here)) return false;
      parameter_marks_[name] = kv.first.Mark();
    }
    return true;
  }

  bool ParseParameter(const YAML::Node& n, const std::string& name, const std::string& path) {
    if (!CheckKeys(n, path, kParameterKeys)) return false;
    Parameter p;
    p.name = name;
    if (!InferDistribution(n, path, &p.distribution)) return false;
    const std::vector<std::string> takes = KeysOf(p.distribution);
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (key != "distribution" && std::find(takes.begin(), takes.end(), key) == takes.end()) {
        return Fail(kv.first, path,
                    fmt::format("'{}' does not apply to distribution '{}' (it takes {})", key,
                                DistributionName(p.distribution), JoinWith(takes, ", ")));
      }
    }
    bool ok = true;
    switch (p.distribution) {
      case Distribution::kConstant:
        if (!n["value"]) return Fail(n, path, "'constant' needs 'value'");
        p.values = {YamlToJson(n["value"])};
        break;
      case Distribution::kCategorical: ok = ReadCategorical(n, path, &p); break;
      case Distribution::kNormal:
      case Distribution::kQNormal:
      case Distribution::kLogNormal:
      case Distribution::kQLogNormal:
        ok = (!n["mu"] || ReadNumber(n["mu"], path, "mu", &p.mu)) &&
             (!n["sigma"] || ReadNumber(n["sigma"], path, "sigma", &p.sigma));
        if (ok && p.sigma < 0) ok = Fail(n["sigma"], path, "'sigma' must not be negative");
        break;
      default: ok = ReadRange(n, path, &p);
    }
    if (ok && n["q"]) {
      ok = ReadNumber(n["q"], path, "q", &p.q, &p.q_is_integer);
      if (ok && p.q <= 0) ok = Fail(n["q"], path, "'q' must be above 0");
    }
    if (ok) spec_.parameters.push_back(std::move(p));
    return ok;
  }

  // The keys a distribution takes besides `distribution` itself.
  static std::vector<std::string> KeysOf(Distribution d) {
    switch (d) {
      case Distribution::kConstant: return {"value"};
      case Distribution::kCategorical: return {"values", "probabilities"};
      case Distribution::kQUniform:
      case Distribution::kQLogUniform:
      case Distribution::kQLogUniformValues: return {"min", "max", "q"};
      case Distribution::kNormal:
      case Distribution::kLogNormal: return {"mu", "sigma"};
      case Distribution::kQNormal:
      case Distribution::kQLogNormal: return {"mu", "sigma", "q"};
      default: return {"min", "max"};
    }
  }

  // The explicit distribution, or W&B's inference from the keys present.
  bool InferDistribution(const YAML::Node& n, const std::string& path, Distribution* out) {
    if (const YAML::Node d = n["distribution"]) {
      std::string name;
      if (!ReadString(d, path, &name)) return false;
      if (auto known = DistributionFromName(name)) {
        *out = *known;
        return true;
      }
      if (name == "inv_log_uniform" || name == "inv_log_uniform_values" || name == "beta" || name == "q_beta") {
        return Fail(
            d, path,
            fmt::format("distribution '{}' is not supported (supported: {})", name, JoinWith(DistributionNames(), ", ")));
      }
      return Fail(d, path, fmt::format("unknown distribution '{}'{}", name, DidYouMean(name, DistributionNames())));
    }
    if (n["value"]) {
      *out = Distribution::kConstant;
    } else if (n["values"]) {
      *out = Distribution::kCategorical;
    } else if (n["min"] && n["max"]) {
      const bool integers = YamlToJson(n["min"]).is_number_integer() && YamlToJson(n["max"]).is_number_integer();
      *out = integers ? Distribution::kIntUniform : Distribution::kUniform;
    } else {
      return Fail(n, path, "needs 'value', 'values', 'min' and 'max', or a 'distribution'");
    }
    return true;
  }

  bool ReadCategorical(const YAML::Node& n, const std::string& path, Parameter* p) {
    const YAML::Node values = n["values"];
    if (!values || !values.IsSequence() || values.size() == 0) {
      return Fail(values ? values : n, path, "'values' must be a non-empty list");
    }
    for (const auto& v : values) p->values.push_back(YamlToJson(v));
    const YAML::Node probabilities = n["probabilities"];
    if (!probabilities) {
      p->values = Distinct(p->values);
      return true;
    }
    if (!probabilities.IsSequence() || probabilities.size() != values.size()) {
      return Fail(probabilities, path,
                  fmt::format("'probabilities' must be a list of {} numbers, one per value", values.size()));
    }
    double sum = 0;
    for (const auto& item : probabilities) {
      double prob = 0;
      if (!ReadNumber(item, path, "probabilities", &prob)) return false;
      if (prob < 0) return Fail(item, path, "'probabilities' must not be negative");
      p->probabilities.push_back(prob);
      sum += prob;
    }
    if (std::fabs(sum - 1) > 1e-6) {
      return Fail(probabilities, path, fmt::format("'probabilities' add up to {}, not 1", PyFloatRepr(sum)));
    }
    for (double& prob : p->probabilities) prob /= sum;
    return true;
  }

  // min and max of the uniform and log-uniform families.
  bool ReadRange(const YAML::Node& n, const std::string& path, Parameter* p) {
    const std::string_view dist = DistributionName(p->distribution);
    if (!n["min"] || !n["max"]) return Fail(n, path, fmt::format("'{}' needs 'min' and 'max'", dist));
    bool min_integer = false, max_integer = false;
    if (!ReadNumber(n["min"], path, "min", &p->min, &min_integer) ||
        !ReadNumber(n["max"], path, "max", &p->max, &max_integer)) {
      return false;
    }
    p->bounds_are_integers = min_integer && max_integer;
    if (p->distribution == Distribution::kIntUniform && !p->bounds_are_integers) {
      const YAML::Node bad = min_integer ? n["max"] : n["min"];
      return Fail(bad, path, fmt::format("int_uniform needs whole numbers; '{}' is not one", bad.Scalar()));
    }
    if (p->min >= p->max) {
      return Fail(n["min"], path,
                  fmt::format("'min' ({}) is {} 'max' ({})", n["min"].Scalar(), p->min > p->max ? "above" : "equal to",
                              n["max"].Scalar()));
    }
    const bool log_of_values =
        p->distribution == Distribution::kLogUniformValues || p->distribution == Distribution::kQLogUniformValues;
    if (log_of_values && p->min <= 0) {
      return Fail(n["min"], path, fmt::format("'min' must be above 0 for {}: values are drawn on a log scale", dist));
    }
    return true;
  }

  bool ParseCommand(const YAML::Node& n) {
    if (!n) {
      spec_.command = kDefaultWandbCommand;
    } else {
      if (!n.IsSequence() || n.size() == 0) return Fail(n, "command", "must be a non-empty list of arguments");
      for (const auto& item : n) {
        if (!item.IsScalar()) return Fail(item, "command", "each item must be a single value, not a list or mapping");
        const std::string text = PyStr(YamlToJson(item));
        const std::string_view macro = MacroName(text);
        if (!macro.empty() && !StartsWith(macro, "envvar:") &&
            std::find(CommandMacros().begin(), CommandMacros().end(), macro) == CommandMacros().end()) {
          if (macro == "args_json_file" || macro == "project" || macro == "entity") {
            return Fail(item, "command", fmt::format("the macro '{}' is not supported", text));
          }
          return Fail(item, "command", fmt::format("unknown macro '{}'{}", text, DidYouMean(macro, CommandMacros())));
        }
        spec_.command.push_back(text);
      }
    }
    const bool uses_program =
        std::find(spec_.command.begin(), spec_.command.end(), "${program}") != spec_.command.end();
    if (uses_program && spec_.program.empty()) {
      return Fail(n ? n.Mark() : YAML::Mark::null_mark(), "", "'program' is missing, and the command runs ${program}");
    }
    return true;
  }

  // W&B's hyperband section; its checks are W&B's schema's (min_iter or max_iter with s, eta above 1).
  bool ParseEarlyTerminate(const YAML::Node& n) {
    constexpr std::string_view kPath = "early_terminate";
    if (!ExpectMap(n, kPath, "type hyperband and its settings") || !CheckKeys(n, kPath, kEarlyTerminateKeys)) {
      return false;
    }
    std::string type;
    if (!n["type"]) return Fail(n, kPath, "'type' is missing; use hyperband");
    if (!ReadString(n["type"], kPath, &type)) return false;
    if (type != "hyperband") return Fail(n["type"], kPath, fmt::format("unknown type '{}'; use hyperband", type));
    HyperbandSpec h;
    int64_t integer = 0;
    if (n["eta"] && !ReadNumber(n["eta"], kPath, "eta", &h.eta)) return false;
    if (h.eta <= 1) return Fail(n["eta"], kPath, "'eta' must be above 1");
    if (n["strict"] && !ReadBool(n["strict"], kPath, "strict", &h.strict)) return false;
    if (n["max_iter"]) {
      if (!ReadInteger(n["max_iter"], kPath, "max_iter", 1, &integer)) return false;
      h.max_iter = integer;
      if (!n["s"]) return Fail(n, kPath, "'max_iter' needs 's', the number of bands");
      if (!ReadInteger(n["s"], kPath, "s", 1, &h.s)) return false;
    } else if (n["min_iter"]) {
      if (!ReadInteger(n["min_iter"], kPath, "min_iter", 1, &integer)) return false;
      h.min_iter = integer;
    } else {
      return Fail(n, kPath, "needs 'min_iter', or 'max_iter' and 's'");
    }
    if (auto bands = HyperbandBands(h); !bands) return Fail(n, kPath, bands.error().message);
    if (!spec_.metric) return Fail(n, kPath, "hyperband compares runs by the sweep's metric: add 'metric'");
    spec_.early_terminate = h;
    return true;
  }

  bool ParseMetric(const YAML::Node& n) {
    if (!ExpectMap(n, "metric", "name and goal") || !CheckKeys(n, "metric", kMetricKeys)) return false;
    MetricSpec metric;
    if (!n["name"]) return Fail(n, "metric", "'name' is missing");
    if (!ReadString(n["name"], "metric.name", &metric.name)) return false;
    if (const YAML::Node goal = n["goal"]) {
      std::string text;
      if (!ReadString(goal, "metric.goal", &text)) return false;
      if (text == "maximize") {
        metric.goal = Goal::kMaximize;
      } else if (text != "minimize") {
        return Fail(goal, "metric",
                    fmt::format("unknown goal '{}'{}", text, DidYouMean(text, {"minimize", "maximize"})));
      }
    }
    if (const YAML::Node target = n["target"]) {
      double value = 0;
      if (!ReadNumber(target, "metric", "target", &value)) return false;
      metric.target = value;
    }
    spec_.metric = metric;
    return true;
  }

  // Checks across sections: unique names, a run count for random search, a grid of a plannable size.
  bool CheckPlan() {
    auto& params = spec_.parameters;
    std::sort(params.begin(), params.end(), [](const Parameter& a, const Parameter& b) { return a.name < b.name; });
    for (size_t i = 1; i < params.size(); ++i) {
      if (params[i].name == params[i - 1].name) {
        return Fail(parameter_marks_[params[i].name], "parameters",
                    fmt::format("'{}' is defined twice (once nested, once with dots)", params[i].name));
      }
    }
    for (const auto& [cap, mark, key] : {std::tuple(spec_.run_cap, run_cap_mark_, "run_cap"),
                                         std::tuple(spec_.saturate.runs, runs_mark_, "saturate.runs")}) {
      if (cap && *cap > kMaxRuns) {
        return Fail(mark, "", fmt::format("{} {} is more than the {} runs a sweep may plan", key, *cap, kMaxRuns));
      }
    }
    if (spec_.method != Method::kGrid && !spec_.run_cap && !spec_.saturate.runs) {
      return Fail(method_mark_, "",
                  fmt::format("method '{}' needs a run count: set run_cap, or runs in the saturate section",
                              MethodName(spec_.method)));
    }
    if (spec_.method == Method::kBayes && !spec_.metric) {
      return Fail(method_mark_, "", "method 'bayes' models the sweep's metric: add 'metric' with its name and goal");
    }
    if (spec_.method == Method::kBayes && !spec_.saturate.shape.empty()) {
      return Fail(method_mark_, "", "method 'bayes' proposes values as runs start: saturate.shape cannot group them");
    }
    if (spec_.method == Method::kGrid) {
      for (const auto& p : params) {
        auto values = GridValues(p, kMaxRuns);
        if (!values) return Fail(parameter_marks_[p.name], "parameters." + p.name, values.error().message);
      }
      if (auto count = GridRunCount(params, RunCap(spec_)); !count) {
        return Fail(YAML::Mark::null_mark(), "", count.error().message);
      }
    }
    return true;
  }

  Spec spec_;
  std::map<std::string, YAML::Mark> parameter_marks_;
  YAML::Mark method_mark_ = YAML::Mark::null_mark();
  YAML::Mark run_cap_mark_ = YAML::Mark::null_mark();
  YAML::Mark runs_mark_ = YAML::Mark::null_mark();
};

}  // namespace

std::string_view MethodName(Method m) {
  switch (m) {
    case Method::kGrid: return "grid";
    case Method::kRandom: return "random";
    case Method::kBayes: return "bayes";
  }
  return "?";
}

std::string_view GoalName(Goal g) { return g == Goal::kMinimize ? "minimize" : "maximize"; }

Result<Spec> ParseSpec(std::string_view yaml, std::string_view source) {
  if (yaml.size() > kMaxSpecBytes) {
    return UsageError(
        fmt::format("{}: the spec is larger than {}, the most a spec may be", source, FormatBytes(kMaxSpecBytes)));
  }
  // Out of memory anywhere in parsing is this input's doing (the caps above make it unlikely): an error naming
  // the file, never an abort.
  try {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::DeepRecursion& e) {
      return UsageError(fmt::format("{}: the spec nests too deep for the YAML reader; a spec may nest at most {}",
                                    SpecPlace(source, e.mark), kMaxSpecDepth));
    } catch (const YAML::Exception& e) {
      return UsageError(fmt::format("{}: {}", SpecPlace(source, e.mark), e.msg));
    }
    size_t nodes = 0;
    if (auto bad = CheckExpansion(root, 0, &nodes, source)) return UsageError(*bad);
    try {
      return Parser(source).Run(root);
    } catch (const YAML::Exception& e) {
      // The parser checks node kinds before it looks inside; this is a last line of defence.
      return UsageError(fmt::format("{}: {}", source, e.what()));
    }
  } catch (const std::bad_alloc&) {
    return UsageError(fmt::format("{}: out of memory while reading the sweep spec", source));
  }
}

std::optional<int64_t> RunCap(const Spec& spec) {
  std::optional<int64_t> cap;
  for (const auto& limit : {spec.run_cap, spec.saturate.runs}) {
    if (limit) cap = cap ? std::min(*cap, *limit) : *limit;
  }
  return cap;
}

std::vector<std::string> SpecWarnings(const Spec& spec) {
  std::vector<std::string> warnings = spec.warnings;
  const std::string& pattern = spec.saturate.metric_pattern;
  if (!spec.metric || pattern.empty()) return warnings;
  // A pattern that does not compile is an error where the sweep starts (controller, node wrapper), not here.
  auto compiled = MetricPattern::Create(pattern, "'metric_pattern'");
  if (!compiled) return warnings;
  const std::vector<std::string> groups = compiled->names();
  if (!groups.empty() && std::find(groups.begin(), groups.end(), spec.metric->name) == groups.end()) {
    warnings.push_back(fmt::format("metric '{}' is not a named group of saturate.metric_pattern ({}); it can only "
                                   "come from the saturate Python helper",
                                   spec.metric->name, JoinWith(groups, ", ")));
  }
  return warnings;
}

Result<Spec> LoadSpecFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UsageError(fmt::format("cannot read sweep spec {}: {}", path, std::strerror(errno)));
  // One byte past the cap is enough to refuse it (and a device that never ends is never read whole).
  std::string text(kMaxSpecBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return UsageError(fmt::format("cannot read sweep spec {}: {}", path, std::strerror(errno)));
  text.resize(static_cast<size_t>(in.gcount()));
  return ParseSpec(text, path);
}

Result<Spec> SpecFromGrid(const std::vector<std::string>& grid, std::vector<std::string> command) {
  Spec spec;
  spec.source = "--grid";
  spec.method = Method::kGrid;
  spec.command_style = CommandStyle::kPlaceholders;
  std::vector<std::string> names;
  for (const auto& flag : grid) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
      return UsageError(fmt::format("--grid '{}': expected NAME=VALUE[,VALUE...], e.g. --grid lr=0.1,0.01", flag));
    }
    Parameter p;
    p.name = flag.substr(0, eq);
    p.distribution = Distribution::kCategorical;
    if (!IsValidName(p.name)) {
      return UsageError(
          fmt::format("--grid '{}': '{}' is not a valid name: use letters, digits, '_', '.' and '-', "
                      "starting with a letter or '_'",
                      flag, p.name));
    }
    if (std::find(names.begin(), names.end(), p.name) != names.end()) {
      return UsageError(fmt::format("--grid {} is given twice; list all its values in one --grid", p.name));
    }
    for (const auto& text : Split(std::string_view(flag).substr(eq + 1), ',')) {
      if (Trim(text).empty()) return UsageError(fmt::format("--grid '{}': a value is empty", flag));
      p.values.push_back(ResolvePlainScalar(Trim(text)));
    }
    p.values = Distinct(p.values);
    names.push_back(p.name);
    spec.parameters.push_back(std::move(p));
  }
  if (spec.parameters.empty()) return UsageError("no --grid parameters given");
  if (command.empty()) {
    return UsageError("the command is missing: give it after --, with {NAME} where each --grid value goes");
  }
  // Every placeholder must name a parameter, and every parameter must be used somewhere.
  std::set<std::string> used;
  auto record = [&](std::string_view name) -> std::optional<std::string> {
    if (std::find(names.begin(), names.end(), name) == names.end()) return std::nullopt;
    used.emplace(name);
    return std::string();
  };
  for (const auto& item : command) {
    if (auto filled = FillPlaceholders(item, record, names); !filled) return filled.error();
  }
  for (const auto& name : names) {
    if (!used.count(name)) {
      return UsageError(
          fmt::format("--grid {} is not used in the command; put {{{}}} where its value goes", name, name));
    }
  }
  std::sort(spec.parameters.begin(), spec.parameters.end(),
            [](const Parameter& a, const Parameter& b) { return a.name < b.name; });
  spec.command = std::move(command);
  if (auto count = GridRunCount(spec.parameters, RunCap(spec)); !count) return count.error();
  return spec;
}

}  // namespace sat::sweep
