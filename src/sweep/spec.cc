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

#include "sweep/metrics.h"
#include "sweep/plan.h"
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
const std::vector<std::string> kSaturateKeys = {"gpus", "max_per_gpu", "memory_margin", "timeout", "retries",
                                                "metric_pattern", "env", "seed", "runs", "shape", "auto",
                                                "backend", "slurm", "price_per_gpu_hour", "stage",
                                                "stage_policy", "stage_dir", "stage_cap", "stage_verify",
                                                "stage_copy_first", "time_budget_runs"};

// W&B's rule for parameter names: ^[A-Za-z_][A-Za-z0-9_.-]*$.
bool IsValidName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; });
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  auto close = ClosestMatch(word, candidates);
  return close ? fmt::format(" (did you mean '{}'?)", *close) : fmt::format(" (valid: {})", Join(candidates, ", "));
}

// What a spec may be. W&B's specs are a few kilobytes; these refuse a file built to exhaust memory before anything
// is expanded: YAML aliases share one node, so nine nested anchors of ten items each (under 1 KB) expand to 10^9
// values when converted, and a spec nested hundreds deep is a recursion, not a sweep.
constexpr size_t kMaxSpecBytes = size_t{1} << 20;
constexpr size_t kMaxSpecNodes = 100000;  // as expanded: an alias counts each time it is used
constexpr int kMaxSpecDepth = 64;

std::string At(std::string_view source, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(source);
  return fmt::format("{}:{}:{}", source, mark.line + 1, mark.column + 1);
}

// Walks `n` as the conversion to JSON would expand it, stopping at the first cap it passes; the problem, if any.
std::optional<std::string> CheckExpansion(const YAML::Node& n, int depth, size_t* nodes, std::string_view source) {
  if (++*nodes > kMaxSpecNodes) {
    return fmt::format("{}: the spec expands to more than {} values (an alias counts each time it is used); a spec "
                       "may hold at most {}",
                       At(source, n.Mark()), kMaxSpecNodes, kMaxSpecNodes);
  }
  if (depth > kMaxSpecDepth) {
    return fmt::format("{}: the spec nests more than {} levels deep; a spec may nest at most {}", At(source, n.Mark()),
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

// PyYAML's typing of one node: quoted scalars are strings, plain ones go through the YAML 1.1 resolver.
nlohmann::json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return n.Scalar();
      return ResolvePlainScalar(n.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : n) out.push_back(ToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : n) out[kv.first.Scalar()] = ToJson(kv.second);
      return out;
    }
    default: return nullptr;
  }
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

class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source) { spec_.source = source_; }

  Result<Spec> Run(const YAML::Node& root) {
    if (!ParseTop(root)) return *error_;
    return std::move(spec_);
  }

 private:
  // Records "FILE:LINE:COLUMN: PATH: MESSAGE" as the error and returns false.
  bool Fail(const YAML::Mark& mark, std::string_view path, std::string_view message) {
    std::string where = mark.is_null() ? source_ : fmt::format("{}:{}:{}", source_, mark.line + 1, mark.column + 1);
    error_ = UsageError(path.empty() ? fmt::format("{}: {}", where, message)
                                     : fmt::format("{}: {}: {}", where, path, message));
    return false;
  }
  bool Fail(const YAML::Node& at, std::string_view path, std::string_view message) {
    return Fail(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), path, message);
  }

  bool ExpectMap(const YAML::Node& n, std::string_view path, std::string_view what) {
    if (n.IsMap()) return true;
    return Fail(n, path, fmt::format("must be a mapping of {}", what));
  }

  // No key of `map` appears twice (yaml-cpp keeps both; PyYAML would silently keep the last).
  bool CheckUnique(const YAML::Node& map, std::string_view path) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (auto [it, fresh] = seen.emplace(key, kv.first.Mark()); !fresh) {
        return Fail(kv.first, path, fmt::format("'{}' is given twice (first at line {})", key, it->second.line + 1));
      }
    }
    return true;
  }

  // Every key of `map` must be in `allowed` and appear once.
  bool CheckKeys(const YAML::Node& map, std::string_view path, const std::vector<std::string>& allowed) {
    if (!CheckUnique(map, path)) return false;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        return Fail(kv.first, path, fmt::format("unknown key '{}'{}", key, DidYouMean(key, allowed)));
      }
    }
    return true;
  }

  bool ReadString(const YAML::Node& n, std::string_view path, std::string* out) {
    if (!n.IsScalar()) return Fail(n, path, "must be a single value, not a list or mapping");
    *out = n.Scalar();
    return true;
  }

  // A number, or a string that reads as one ("1e-5", which YAML 1.1 leaves a string).
  bool ReadNumber(const YAML::Node& n, std::string_view path, std::string_view key, double* out,
                  bool* is_integer = nullptr) {
    const nlohmann::json v = n.IsScalar() ? ToJson(n) : nlohmann::json();
    std::optional<double> number;
    if (v.is_number()) number = v.get<double>();
    if (v.is_string()) number = ParseDouble(v.get<std::string>());
    if (!number || !std::isfinite(*number)) {
      return Fail(n, path, fmt::format("'{}' must be a number, not '{}'", key, n.IsScalar() ? n.Scalar() : "..."));
    }
    *out = *number;
    if (is_integer) *is_integer = v.is_number_integer();
    return true;
  }

  bool ReadInteger(const YAML::Node& n, std::string_view path, std::string_view key, int64_t lowest, int64_t* out) {
    const nlohmann::json v = n.IsScalar() ? ToJson(n) : nlohmann::json();
    if (!v.is_number_integer()) {
      return Fail(n, path,
                  fmt::format("'{}' must be a whole number, not '{}'", key, n.IsScalar() ? n.Scalar() : "..."));
    }
    if (v.get<int64_t>() < lowest) return Fail(n, path, fmt::format("'{}' must be at least {}", key, lowest));
    *out = v.get<int64_t>();
    return true;
  }

  // true/false (and YAML 1.1's yes/no, on/off).
  bool ReadBool(const YAML::Node& n, std::string_view path, std::string_view key, bool* out) {
    const nlohmann::json v = n.IsScalar() ? ToJson(n) : nlohmann::json();
    if (!v.is_boolean()) {
      return Fail(n, path, fmt::format("'{}' must be true or false, not '{}'", key, n.IsScalar() ? n.Scalar() : "..."));
    }
    *out = v.get<bool>();
    return true;
  }

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
    if (root["saturate"] && !ParseSaturate(root["saturate"])) return false;
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
                                DistributionName(p.distribution), Join(takes, ", ")));
      }
    }
    bool ok = true;
    switch (p.distribution) {
      case Distribution::kConstant:
        if (!n["value"]) return Fail(n, path, "'constant' needs 'value'");
        p.values = {ToJson(n["value"])};
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
            fmt::format("distribution '{}' is not supported (supported: {})", name, Join(DistributionNames(), ", ")));
      }
      return Fail(d, path, fmt::format("unknown distribution '{}'{}", name, DidYouMean(name, DistributionNames())));
    }
    if (n["value"]) {
      *out = Distribution::kConstant;
    } else if (n["values"]) {
      *out = Distribution::kCategorical;
    } else if (n["min"] && n["max"]) {
      const bool integers = ToJson(n["min"]).is_number_integer() && ToJson(n["max"]).is_number_integer();
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
    for (const auto& v : values) p->values.push_back(ToJson(v));
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
        const std::string text = PyStr(ToJson(item));
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

  // stage: a path, a list of paths, or a list of {path: P}; stage_policy, stage_dir, stage_cap, stage_verify,
  // stage_copy_first.
  bool ParseStage(const YAML::Node& n) {
    StageOptions& o = spec_.saturate.stage;
    if (const YAML::Node stage = n["stage"]) {
      auto add = [&](const YAML::Node& item) {
        // (YAML::Node's assignment writes into the node it refers to, hence one const binding.)
        if (item.IsMap() && !CheckKeys(item, "saturate.stage", {"path"})) return false;
        const YAML::Node path = item.IsMap() ? item["path"] : item;
        if (!path) return Fail(item, "saturate.stage", "each entry needs a 'path', e.g. {path: /nfs/dataset}");
        std::string text;
        if (!ReadString(path, "saturate.stage", &text)) return false;
        if (text.empty()) return Fail(path, "saturate.stage", "a path to stage is empty");
        o.paths.push_back(std::move(text));
        return true;
      };
      if (stage.IsSequence()) {
        for (const auto& item : stage) {
          if (!add(item)) return false;
        }
      } else if (!stage.IsNull() && !add(stage)) {
        return false;
      }
    }
    if (const YAML::Node policy = n["stage_policy"]) {
      std::string text;
      if (!ReadString(policy, "saturate.stage_policy", &text)) return false;
      auto parsed = ParseStagePolicy(text);
      if (!parsed) {
        return Fail(policy, "saturate", fmt::format("unknown stage_policy '{}'; use auto, always or never", text));
      }
      o.policy = *parsed;
    }
    if (const YAML::Node dir = n["stage_dir"]) {
      if (!ReadString(dir, "saturate.stage_dir", &o.dir)) return false;
    }
    if (const YAML::Node cap = n["stage_cap"]) {
      std::string text;
      if (!ReadString(cap, "saturate.stage_cap", &text)) return false;
      auto bytes = ParseBytes(text);
      if (!bytes || *bytes == 0) {
        return Fail(cap, "saturate", fmt::format("'stage_cap' must be a size above 0 like 200GiB or 50G, not '{}'", text));
      }
      o.cap_bytes = *bytes;
    }
    if (const YAML::Node verify = n["stage_verify"]) {
      std::string text;
      if (!ReadString(verify, "saturate.stage_verify", &text)) return false;
      auto checksums = ParseStageVerify(text);
      if (!checksums) {
        return Fail(verify, "saturate", fmt::format("unknown stage_verify '{}'; use sizes or checksums", text));
      }
      o.verify_checksums = *checksums;
    }
    if (const YAML::Node first = n["stage_copy_first"]) {
      std::string text;
      if (!ReadString(first, "saturate.stage_copy_first", &text)) return false;
      auto seconds = ParseDuration(text);
      if (!seconds) {
        return Fail(first, "saturate",
                    fmt::format("'stage_copy_first' must be a duration like 10s or 2m (0 never holds the first run), "
                                "not '{}'", text));
      }
      o.copy_first_s = *seconds;
    }
    return true;
  }

  bool ParseSaturate(const YAML::Node& n) {
    if (!ExpectMap(n, "saturate", "settings") || !CheckKeys(n, "saturate", kSaturateKeys)) return false;
    SaturateOptions& o = spec_.saturate;
    int64_t integer = 0;
    if (n["gpus"] && !ParseGpus(n["gpus"])) return false;
    if (n["max_per_gpu"]) {
      if (!ReadInteger(n["max_per_gpu"], "saturate", "max_per_gpu", 0, &integer)) return false;
      o.max_per_gpu = static_cast<int>(std::min<int64_t>(integer, 1024));
    }
    if (const YAML::Node margin = n["memory_margin"]) {
      if (!ReadNumber(margin, "saturate", "memory_margin", &o.memory_margin)) return false;
      if (o.memory_margin < 0 || o.memory_margin >= 1) {
        return Fail(margin, "saturate", "'memory_margin' must be a fraction in [0, 1), e.g. 0.1");
      }
    }
    if (const YAML::Node timeout = n["timeout"]) {
      std::string text;
      if (!ReadString(timeout, "saturate.timeout", &text)) return false;
      auto seconds = IsNoLimit(text) ? std::optional<double>(0) : ParseDuration(text);
      if (!seconds || (*seconds == 0 && !IsNoLimit(text))) {
        return Fail(timeout, "saturate",
                    fmt::format("'timeout' must be a duration above 0 and at most 366 days like 30m, 90s or 1h30m, "
                                "or 'none' for no limit, not '{}'", text));
      }
      o.timeout_s = *seconds;
    }
    if (n["retries"]) {
      if (!ReadInteger(n["retries"], "saturate", "retries", 0, &integer)) return false;
      o.retries = static_cast<int>(std::min<int64_t>(integer, 1000));
    }
    if (n["metric_pattern"] && !ParseMetricPattern(n["metric_pattern"])) return false;
    if (const YAML::Node env = n["env"]) {
      if (!ExpectMap(env, "saturate.env", "variable names to values") || !CheckUnique(env, "saturate.env")) {
        return false;
      }
      for (const auto& kv : env) {
        const std::string name = kv.first.Scalar();
        if (name.empty() || name.find('=') != std::string::npos) {
          return Fail(kv.first, "saturate.env", fmt::format("'{}' is not a valid variable name", name));
        }
        if (!kv.second.IsScalar() && !kv.second.IsNull()) {
          return Fail(kv.second, "saturate.env", fmt::format("the value of {} must be a single value", name));
        }
        o.env[name] = kv.second.IsNull() ? "" : kv.second.Scalar();
      }
    }
    if (n["seed"]) {
      if (!ReadInteger(n["seed"], "saturate", "seed", 0, &integer)) return false;
      o.seed = static_cast<uint64_t>(integer);
    }
    if (const YAML::Node price = n["price_per_gpu_hour"]) {
      double value = 0;
      if (!ReadNumber(price, "saturate", "price_per_gpu_hour", &value)) return false;
      if (!(value > 0) || !std::isfinite(value)) {
        return Fail(price, "saturate", "'price_per_gpu_hour' must be a price above 0, e.g. 2.50");
      }
      o.price_per_gpu_hour = value;
    }
    if (n["runs"]) {
      if (!ReadInteger(n["runs"], "saturate", "runs", 1, &integer)) return false;
      o.runs = integer;
      runs_mark_ = n["runs"].Mark();
    }
    if (n["auto"] && !ReadBool(n["auto"], "saturate", "auto", &o.auto_instrumentation)) return false;
    if (const YAML::Node clock = n["time_budget_runs"]) {
      std::string text;
      if (!ReadString(clock, "saturate.time_budget_runs", &text)) return false;
      if (text != "pack" && text != "one_per_device") {
        return Fail(clock, "saturate",
                    fmt::format("'time_budget_runs' is pack or one_per_device (runs that stop on the clock share a "
                                "device only with pack), not '{}'",
                                text));
      }
      o.pack_clocked = text == "pack";
    }
    if (const YAML::Node backend = n["backend"]) {
      std::string text;
      if (!ReadString(backend, "saturate.backend", &text)) return false;
      if (text != "local" && text != "slurm") {
        return Fail(backend, "saturate", fmt::format("unknown backend '{}'; use local or slurm", text));
      }
      o.slurm_backend = text == "slurm";
    }
    if (const YAML::Node slurm = n["slurm"]) {
      auto parsed = ParseSlurmSpec(slurm, source_);
      if (!parsed) {
        error_ = parsed.error();
        return false;
      }
      o.slurm = std::move(*parsed);
    }
    if (!ParseStage(n)) return false;
    if (const YAML::Node shape = n["shape"]) {
      // One name, or a list of names.
      if (shape.IsScalar()) {
        o.shape.push_back(shape.Scalar());
      } else if (shape.IsSequence()) {
        for (const auto& item : shape) {
          std::string name;
          if (!ReadString(item, "saturate.shape", &name)) return false;
          o.shape.push_back(std::move(name));
        }
      } else {
        return Fail(shape, "saturate", "'shape' must be a parameter name or a list of them, e.g. [batch_size]");
      }
    }
    return true;
  }

  // "all", one index, a list of indices, or "0,1".
  bool ParseGpus(const YAML::Node& n) {
    std::vector<std::string> items;
    if (n.IsSequence()) {
      for (const auto& item : n) items.push_back(item.IsScalar() ? item.Scalar() : "?");
    } else if (n.IsScalar() && n.Scalar() != "all") {
      items = Split(n.Scalar(), ',');
    } else if (!n.IsScalar()) {
      return Fail(n, "saturate", "'gpus' must be \"all\" or a list of GPU indices");
    }
    for (const auto& item : items) {
      auto index = ParseInt(item);
      if (!index || *index < 0 || *index > 4095) {
        return Fail(n, "saturate",
                    fmt::format("'gpus': '{}' is not a GPU index; give \"all\" or indices like [0, 1]", item));
      }
      auto& gpus = spec_.saturate.gpus;
      if (std::find(gpus.begin(), gpus.end(), *index) != gpus.end()) {
        return Fail(n, "saturate", fmt::format("'gpus' lists GPU {} twice", *index));
      }
      gpus.push_back(static_cast<unsigned>(*index));
    }
    return true;
  }

  bool ParseMetricPattern(const YAML::Node& n) {
    std::string pattern;
    if (!ReadString(n, "saturate.metric_pattern", &pattern)) return false;
    auto compiled = MetricPattern::Create(pattern, "'metric_pattern'");
    if (!compiled) return Fail(n, "saturate", compiled.error().message);
    spec_.saturate.metric_pattern = pattern;
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
      if (auto count = RunCount(spec_); !count) return Fail(YAML::Mark::null_mark(), "", count.error().message);
    }
    return true;
  }

  std::string source_;
  Spec spec_;
  std::optional<Error> error_;
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

std::string_view StagePolicyName(StagePolicy p) {
  switch (p) {
    case StagePolicy::kAuto: return "auto";
    case StagePolicy::kAlways: return "always";
    case StagePolicy::kNever: return "never";
  }
  return "auto";
}

std::optional<bool> ParseStageVerify(std::string_view text) {
  if (text == "sizes") return false;
  if (text == "checksums") return true;
  return std::nullopt;
}

std::optional<StagePolicy> ParseStagePolicy(std::string_view text) {
  for (StagePolicy p : {StagePolicy::kAuto, StagePolicy::kAlways, StagePolicy::kNever}) {
    if (text == StagePolicyName(p)) return p;
  }
  return std::nullopt;
}

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
                                    At(source, e.mark), kMaxSpecDepth));
    } catch (const YAML::Exception& e) {
      return UsageError(fmt::format("{}: {}", At(source, e.mark), e.msg));
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
                                   spec.metric->name, Join(groups, ", ")));
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
  if (auto count = RunCount(spec); !count) return count.error();
  return spec;
}

}  // namespace sat::sweep
