#include "sweep/spec_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sweep/py_values.h"
#include "util/strings.h"

namespace sat::sweep {

std::string SpecPlace(std::string_view source, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(source);
  return fmt::format("{}:{}:{}", source, mark.line + 1, mark.column + 1);
}

nlohmann::json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return n.Scalar();
      return ResolvePlainScalar(n.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : n) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : n) out[kv.first.Scalar()] = YamlToJson(kv.second);
      return out;
    }
    default: return nullptr;
  }
}

std::string JoinWith(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  auto close = ClosestMatch(word, candidates);
  return close ? fmt::format(" (did you mean '{}'?)", *close)
               : fmt::format(" (valid: {})", JoinWith(candidates, ", "));
}

bool SpecReader::Fail(const YAML::Mark& mark, std::string_view path, std::string_view message) {
  const std::string where = SpecPlace(source_, mark);
  error_ = UsageError(path.empty() ? fmt::format("{}: {}", where, message)
                                   : fmt::format("{}: {}: {}", where, path, message));
  return false;
}

bool SpecReader::Fail(const YAML::Node& at, std::string_view path, std::string_view message) {
  return Fail(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), path, message);
}

bool SpecReader::Fail(Error error) {
  error_ = std::move(error);
  return false;
}

bool SpecReader::ExpectMap(const YAML::Node& n, std::string_view path, std::string_view what) {
  if (n.IsMap()) return true;
  return Fail(n, path, fmt::format("must be a mapping of {}", what));
}

bool SpecReader::CheckUnique(const YAML::Node& map, std::string_view path) {
  std::map<std::string, YAML::Mark> seen;
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (auto [it, fresh] = seen.emplace(key, kv.first.Mark()); !fresh) {
      return Fail(kv.first, path, fmt::format("'{}' is given twice (first at line {})", key, it->second.line + 1));
    }
  }
  return true;
}

bool SpecReader::CheckKeys(const YAML::Node& map, std::string_view path, const std::vector<std::string>& allowed) {
  if (!CheckUnique(map, path)) return false;
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Fail(kv.first, path, fmt::format("unknown key '{}'{}", key, DidYouMean(key, allowed)));
    }
  }
  return true;
}

bool SpecReader::ReadString(const YAML::Node& n, std::string_view path, std::string* out) {
  if (!n.IsScalar()) return Fail(n, path, "must be a single value, not a list or mapping");
  *out = n.Scalar();
  return true;
}

bool SpecReader::ReadNumber(const YAML::Node& n, std::string_view path, std::string_view key, double* out,
                            bool* is_integer) {
  const nlohmann::json v = n.IsScalar() ? YamlToJson(n) : nlohmann::json();
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

bool SpecReader::ReadInteger(const YAML::Node& n, std::string_view path, std::string_view key, int64_t lowest,
                             int64_t* out) {
  const nlohmann::json v = n.IsScalar() ? YamlToJson(n) : nlohmann::json();
  if (!v.is_number_integer()) {
    return Fail(n, path, fmt::format("'{}' must be a whole number, not '{}'", key, n.IsScalar() ? n.Scalar() : "..."));
  }
  if (v.get<int64_t>() < lowest) return Fail(n, path, fmt::format("'{}' must be at least {}", key, lowest));
  *out = v.get<int64_t>();
  return true;
}

bool SpecReader::ReadBool(const YAML::Node& n, std::string_view path, std::string_view key, bool* out) {
  const nlohmann::json v = n.IsScalar() ? YamlToJson(n) : nlohmann::json();
  if (!v.is_boolean()) {
    return Fail(n, path, fmt::format("'{}' must be true or false, not '{}'", key, n.IsScalar() ? n.Scalar() : "..."));
  }
  *out = v.get<bool>();
  return true;
}

}  // namespace sat::sweep
