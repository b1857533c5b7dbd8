#include "sweep/slurm_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sweep/spec_reader.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

const std::vector<std::string> kKeys = {"partition", "account", "qos", "time",    "options", "share",
                                        "gpus",      "cpus",    "mem", "margin", "probes",  "poll"};
const std::vector<std::string> kShares = {"auto", "shard", "mps", "gpu"};

Error Fail(const YAML::Node& at, std::string_view source, std::string_view message) {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  return UsageError(fmt::format("{}: saturate.slurm: {}", SpecPlace(source, mark), message));
}

std::optional<std::string> Scalar(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  return n.Scalar();
}

}  // namespace

std::optional<uint64_t> ParseSlurmMemory(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  uint64_t unit = 1ULL << 20;  // sbatch's default unit is MiB
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (std::isalpha(static_cast<unsigned char>(last))) {
    switch (last) {
      case 'K': unit = 1ULL << 10; break;
      case 'M': unit = 1ULL << 20; break;
      case 'G': unit = 1ULL << 30; break;
      case 'T': unit = 1ULL << 40; break;
      default: return std::nullopt;
    }
    text.remove_suffix(1);
  }
  auto value = ParseDouble(text);
  if (!value || !std::isfinite(*value) || *value <= 0) return std::nullopt;
  return static_cast<uint64_t>(std::ceil(*value * static_cast<double>(unit)));
}

Result<SlurmSpec> ParseSlurmSpec(const YAML::Node& n, std::string_view source) {
  if (!n.IsMap()) return Fail(n, source, "must be a mapping of sbatch settings (partition, account, time, ...)");
  SlurmSpec spec;
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      std::string message = fmt::format("unknown key '{}'", key);
      if (auto close = ClosestMatch(key, kKeys)) message += fmt::format(" (did you mean '{}'?)", *close);
      return Fail(kv.first, source, message);
    }
    const YAML::Node& v = kv.second;
    if (key == "options") {
      const bool list = v.IsSequence();
      if (!list && !v.IsScalar()) return Fail(v, source, "'options' must be a list of sbatch options");
      if (list) {
        for (const auto& item : v) {
          auto text = Scalar(item);
          if (!text) return Fail(item, source, "each of 'options' must be one sbatch option, e.g. --constraint=a100");
          spec.options.push_back(*text);
        }
      } else {
        spec.options.push_back(v.Scalar());
      }
      continue;
    }
    auto text = Scalar(v);
    if (!text) return Fail(v, source, fmt::format("'{}' must be a single value", key));
    if (key == "partition") spec.partition = *text;
    if (key == "account") spec.account = *text;
    if (key == "qos") spec.qos = *text;
    if (key == "time" || key == "poll") {
      auto seconds = ParseDuration(*text);
      if (!seconds || *seconds <= 0) {
        return Fail(v, source, fmt::format("'{}' must be a duration above 0 and at most 366 days like 2h, 30m or "
                                           "90s, not '{}'", key, *text));
      }
      (key == "time" ? spec.time_s : spec.poll_s) = *seconds;
    }
    if (key == "share") {
      auto it = std::find(kShares.begin(), kShares.end(), *text);
      if (it == kShares.end()) {
        std::string message = fmt::format("unknown share '{}'; one of auto, shard, mps, gpu", *text);
        if (auto close = ClosestMatch(*text, kShares)) message += fmt::format(" (did you mean '{}'?)", *close);
        return Fail(v, source, message);
      }
      spec.share = static_cast<GpuShare>(it - kShares.begin());
    }
    if (key == "gpus" || key == "cpus" || key == "probes") {
      auto value = ParseInt(*text);
      const long long lowest = key == "gpus" ? 0 : 1;
      if (!value || *value < lowest || *value > 4096) {
        return Fail(v, source,
                    fmt::format("'{}' must be a whole number from {} to 4096, not '{}'", key, lowest, *text));
      }
      const int number = static_cast<int>(*value);
      if (key == "gpus") spec.gpus = number;
      if (key == "cpus") spec.cpus = number;
      if (key == "probes") spec.probes = number;
    }
    if (key == "mem") {
      auto bytes = ParseSlurmMemory(*text);
      if (!bytes) return Fail(v, source, fmt::format("'mem' must be an amount like 32G or 1500M, not '{}'", *text));
      spec.mem_bytes = bytes;
    }
    if (key == "margin") {
      auto value = ParseDouble(*text);
      if (!value || !std::isfinite(*value) || *value < 0 || *value > 10) {
        return Fail(v, source, fmt::format("'margin' must be a fraction like 0.25 (0 to 10), not '{}'", *text));
      }
      spec.margin = *value;
    }
  }
  return spec;
}

}  // namespace sat::sweep
