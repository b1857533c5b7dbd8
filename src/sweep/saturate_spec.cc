#include "sweep/saturate_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sweep/metric_pattern.h"
#include "sweep/spec_reader.h"
#include "util/bytes.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

const std::vector<std::string> kSaturateKeys = {"gpus", "max_per_gpu", "memory_margin", "timeout", "retries",
                                                "metric_pattern", "env", "seed", "runs", "shape", "auto",
                                                "backend", "slurm", "price_per_gpu_hour", "stage",
                                                "stage_policy", "stage_dir", "stage_cap", "stage_verify",
                                                "stage_copy_first", "time_budget_runs"};

class SaturateParser : public SpecReader {
 public:
  SaturateParser(std::string_view source, YAML::Mark* runs_mark) : SpecReader(source), runs_mark_(runs_mark) {}

  Result<SaturateOptions> Run(const YAML::Node& n) {
    if (!ParseSaturate(n)) return *error();
    return std::move(options_);
  }

 private:
  bool ParseSaturate(const YAML::Node& n) {
    if (!ExpectMap(n, "saturate", "settings") || !CheckKeys(n, "saturate", kSaturateKeys)) return false;
    SaturateOptions& o = options_;
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
      if (runs_mark_) *runs_mark_ = n["runs"].Mark();
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
      if (!ReadString(backend, "saturate.backend", &o.backend)) return false;
      o.backend_at = SpecPlace(source_, backend.Mark());
    }
    if (const YAML::Node slurm = n["slurm"]) {
      auto parsed = ParseSlurmSpec(slurm, source_);
      if (!parsed) return Fail(parsed.error());
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
      auto& gpus = options_.gpus;
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
    options_.metric_pattern = pattern;
    return true;
  }

  // stage: a path, a list of paths, or a list of {path: P}; stage_policy, stage_dir, stage_cap, stage_verify,
  // stage_copy_first.
  bool ParseStage(const YAML::Node& n) {
    StagingOptions& o = options_.stage;
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

  SaturateOptions options_;
  YAML::Mark* runs_mark_;
};

}  // namespace

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

Result<SaturateOptions> ParseSaturateSpec(const YAML::Node& node, std::string_view source, YAML::Mark* runs_mark) {
  return SaturateParser(source, runs_mark).Run(node);
}

}  // namespace sat::sweep
