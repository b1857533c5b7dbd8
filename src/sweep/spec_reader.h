// Reading the nodes of a sweep spec's YAML (sweep/spec.h) as PyYAML types them, with errors that point into the
// file: "FILE:LINE:COLUMN: PATH: MESSAGE" (line and column 1-based; PATH the setting, e.g. "parameters.lr" or
// "saturate"). Each section's parser (the top level, `saturate:`) is a SpecReader: its checks record the first
// error and return false, so a parse is a chain of `if (!Read...) return false;` ending in the one error.
//
// yaml-cpp is reached only through here and the sections' parsers; every error is a usage error (kExitUsage).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace sat::sweep {

// Where a node is, as errors name it: "FILE:LINE:COLUMN", or the file alone for a null mark.
std::string SpecPlace(std::string_view source, const YAML::Mark& mark);

// PyYAML's typing of one node: quoted scalars are strings, plain ones go through the YAML 1.1 resolver
// (sweep/py_values.h); sequences and mappings become arrays and objects.
nlohmann::json YamlToJson(const YAML::Node& n);

// " (did you mean 'X'?)" when a candidate is close to `word`, else " (valid: A, B, C)".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// `items` joined with `sep`.
std::string JoinWith(const std::vector<std::string>& items, std::string_view sep);

class SpecReader {
 public:
  explicit SpecReader(std::string_view source) : source_(source) {}

  const std::string& source() const { return source_; }
  // The first error recorded; set once a check returned false.
  const std::optional<Error>& error() const { return error_; }

 protected:
  // Records "FILE:LINE:COLUMN: PATH: MESSAGE" (no PATH when it is empty; the file alone for a null mark) as the
  // error and returns false.
  bool Fail(const YAML::Mark& mark, std::string_view path, std::string_view message);
  bool Fail(const YAML::Node& at, std::string_view path, std::string_view message);
  // Records an error made elsewhere (a sub-section's parser) and returns false.
  bool Fail(Error error);

  bool ExpectMap(const YAML::Node& n, std::string_view path, std::string_view what);
  // No key of `map` appears twice (yaml-cpp keeps both; PyYAML would silently keep the last).
  bool CheckUnique(const YAML::Node& map, std::string_view path);
  // Every key of `map` is in `allowed` and appears once; an unknown one names the closest valid key.
  bool CheckKeys(const YAML::Node& map, std::string_view path, const std::vector<std::string>& allowed);

  bool ReadString(const YAML::Node& n, std::string_view path, std::string* out);
  // A number, or a string that reads as one ("1e-5", which YAML 1.1 leaves a string); finite.
  bool ReadNumber(const YAML::Node& n, std::string_view path, std::string_view key, double* out,
                  bool* is_integer = nullptr);
  // A whole number of at least `lowest`.
  bool ReadInteger(const YAML::Node& n, std::string_view path, std::string_view key, int64_t lowest, int64_t* out);
  // true/false (and YAML 1.1's yes/no, on/off).
  bool ReadBool(const YAML::Node& n, std::string_view path, std::string_view key, bool* out);

  std::string source_;

 private:
  std::optional<Error> error_;
};

}  // namespace sat::sweep
