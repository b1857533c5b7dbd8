#include "sweep/py_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <vector>

#include "util/strings.h"
#include "util/utf8.h"

namespace sat::sweep {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool OneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

// True when `s` is non-empty and every character is a digit of `base` or '_'.
bool DigitsOrUnderscores(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    int d = IsDigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (c != '_' && (d < 0 || d >= base)) return false;
  }
  return true;
}

std::string WithoutUnderscores(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out += c;
  }
  return out;
}

// PyYAML's int: [-+]?(0b[01_]+ | 0[0-7_]+ | 0 | [1-9][0-9_]* | 0x[0-9a-fA-F_]+ | [1-9][0-9_]*(:[0-5]?[0-9])+),
// the last being base 60 ("1:30" is 90).
std::optional<nlohmann::json> ResolveInt(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::vector<std::string_view> parts = {s};
  int base = 10;
  if (StartsWith(s, "0b")) {
    base = 2;
    parts = {s.substr(2)};
  } else if (StartsWith(s, "0x")) {
    base = 16;
    parts = {s.substr(2)};
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
  } else if (s[0] == '_') {
    return std::nullopt;
  } else if (s.find(':') != std::string_view::npos) {
    if (s[0] == '0') return std::nullopt;
    parts.clear();
    for (size_t start = 0, colon; start <= s.size(); start = colon + 1) {
      colon = std::min(s.find(':', start), s.size());
      parts.push_back(s.substr(start, colon - start));
    }
    for (size_t i = 1; i < parts.size(); ++i) {
      if (parts[i].empty() || parts[i].size() > 2 || !DigitsOrUnderscores(parts[i], 10) ||
          (parts[i].size() == 2 && parts[i][0] > '5') || parts[i].find('_') != std::string_view::npos) {
        return std::nullopt;
      }
    }
  }
  uint64_t magnitude = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!DigitsOrUnderscores(parts[i], base)) return std::nullopt;
    const std::string clean = WithoutUnderscores(parts[i]);
    uint64_t part = 0;
    auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), part, base);
    if (clean.empty() || ec != std::errc() || end != clean.data() + clean.size()) return std::nullopt;
    if (i > 0 && magnitude > (std::numeric_limits<uint64_t>::max() - part) / 60) return std::nullopt;
    magnitude = i == 0 ? part : magnitude * 60 + part;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (magnitude > kMaxPositive + (negative ? 1 : 0)) return std::nullopt;
  if (negative) return nlohmann::json(static_cast<int64_t>(0 - magnitude));
  return nlohmann::json(static_cast<int64_t>(magnitude));
}

// PyYAML's float: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9][0-9_]*([eE][-+][0-9]+)? |
// [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN).
std::optional<double> ResolveFloat(std::string_view text) {
  if (OneOf(text, {".nan", ".NaN", ".NAN"})) return std::numeric_limits<double>::quiet_NaN();
  std::string_view s = text;
  const bool has_sign = !s.empty() && (s[0] == '-' || s[0] == '+');
  const bool negative = has_sign && s[0] == '-';
  if (has_sign) s.remove_prefix(1);
  if (OneOf(s, {".inf", ".Inf", ".INF"})) {
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  size_t i = 0;
  auto skip_digits = [&] {
    while (i < s.size() && (IsDigit(s[i]) || s[i] == '_')) ++i;
  };
  if (!s.empty() && IsDigit(s[0])) {
    skip_digits();
    if (i >= s.size() || s[i] != '.') return std::nullopt;
    ++i;
    skip_digits();
  } else if (!has_sign && s.size() > 1 && s[0] == '.' && IsDigit(s[1])) {
    i = 1;
    skip_digits();
  } else {
    return std::nullopt;
  }
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return std::nullopt;
    ++i;
    if (i >= s.size() || (s[i] != '-' && s[i] != '+')) return std::nullopt;
    ++i;
    const size_t exponent_start = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == exponent_start || i != s.size()) return std::nullopt;
  }
  std::string clean = WithoutUnderscores(s);
  double v = std::strtod(clean.c_str(), nullptr);
  return negative ? -v : v;
}

void AppendPyStringRepr(std::string_view s, std::string* out) {
  const char quote = (s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos) ? '"' : '\'';
  *out += quote;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '\r') {
      *out += "\\r";
    } else if (c == '\t') {
      *out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      *out += fmt::format("\\x{:02x}", u);
    } else {
      *out += c;
    }
  }
  *out += quote;
}

// json.dumps' string: ASCII only, \uXXXX (UTF-16 surrogate pairs above U+FFFF) for everything else.
void AppendJsonString(std::string_view s, std::string* out) {
  *out += '"';
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodePoint(s, &i);
    switch (cp) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (cp >= 0x20 && cp < 0x7f) {
          *out += static_cast<char>(cp);
        } else if (cp < 0x10000) {
          *out += fmt::format("\\u{:04x}", cp);
        } else {
          const uint32_t v = cp - 0x10000;
          *out += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
        }
    }
  }
  *out += '"';
}

// Python's repr() of a value, or with `json` its json.dumps(): the two differ only in literals and strings.
void AppendPython(const nlohmann::json& v, bool json, std::string* out) {
  auto append_string = [&](std::string_view s) { json ? AppendJsonString(s, out) : AppendPyStringRepr(s, out); };
  switch (v.type()) {
    case nlohmann::json::value_t::boolean:
      *out += v.get<bool>() ? (json ? "true" : "True") : (json ? "false" : "False");
      return;
    case nlohmann::json::value_t::number_integer: *out += std::to_string(v.get<int64_t>()); return;
    case nlohmann::json::value_t::number_unsigned: *out += std::to_string(v.get<uint64_t>()); return;
    case nlohmann::json::value_t::number_float: {
      const double d = v.get<double>();
      if (json && !std::isfinite(d)) {
        *out += std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
      } else {
        *out += PyFloatRepr(d);
      }
      return;
    }
    case nlohmann::json::value_t::string: append_string(v.get_ref<const std::string&>()); return;
    case nlohmann::json::value_t::array:
    case nlohmann::json::value_t::object: {
      const bool object = v.is_object();
      *out += object ? '{' : '[';
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (!first) *out += ", ";
        first = false;
        if (object) {
          append_string(key);
          *out += ": ";
        }
        AppendPython(item, json, out);
      }
      *out += object ? '}' : ']';
      return;
    }
    default:  // null; binary and discarded values never come from a sweep spec
      *out += json ? "null" : "None";
      return;
  }
}

}  // namespace

nlohmann::json ResolvePlainScalar(std::string_view text) {
  if (OneOf(text, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (OneOf(text, {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) return true;
  if (OneOf(text, {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) return false;
  if (auto i = ResolveInt(text)) return *i;
  if (auto f = ResolveFloat(text)) return *f;
  return std::string(text);
}

std::string PyFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits from to_chars ("-1.2345e-05"), then Python's layout: positional when the
  // decimal exponent is in [-4, 16), scientific otherwise.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  const int point = exponent + 1;  // digits d1d2... mean 0.d1d2... x 10^point
  const int n = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    if (point >= n) return sign + digits + std::string(static_cast<size_t>(point - n), '0') + ".0";
    return sign + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
  }
  std::string mantissa = digits.substr(0, 1);
  if (n > 1) mantissa += "." + digits.substr(1);
  return fmt::format("{}{}e{}{:02d}", sign, mantissa, exponent < 0 ? '-' : '+', std::abs(exponent));
}

std::string PyStr(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  AppendPython(v, /*json=*/false, &out);
  return out;
}

std::string PyJsonDumps(const nlohmann::json& v) {
  std::string out;
  AppendPython(v, /*json=*/true, &out);
  return out;
}

}  // namespace sat::sweep
