#include "util/bytes.h"

#include <cctype>
#include <cmath>
#include <string>

#include "util/strings.h"

namespace sat {

std::optional<uint64_t> ParseBytes(std::string_view s) {
  s = Trim(s);
  size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) ++end;
  const auto number = ParseDouble(s.substr(0, end));
  if (!number || *number < 0) return std::nullopt;
  std::string unit = ToLower(Trim(s.substr(end)));
  if (unit.ends_with("ib")) {
    unit.resize(unit.size() - 2);
  } else if (unit.size() > 1 && unit.back() == 'b') {
    unit.pop_back();
  } else if (unit == "b") {
    unit.clear();
  }
  static const std::string kUnits = "kmgtp";
  double scale = 1;
  if (!unit.empty()) {
    const size_t i = kUnits.find(unit);
    if (unit.size() != 1 || i == std::string::npos) return std::nullopt;
    scale = std::pow(1024.0, static_cast<double>(i + 1));
  }
  const double bytes = *number * scale;
  if (!std::isfinite(bytes) || bytes >= 9.2e18) return std::nullopt;
  return static_cast<uint64_t>(std::llround(bytes));
}

}  // namespace sat
