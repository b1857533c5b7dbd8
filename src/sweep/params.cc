#include "sweep/params.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>

#include "util/strings.h"

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

// Decodes one UTF-8 code point at s[*i] and advances *i; U+FFFD for a malformed sequence.
uint32_t NextCodePoint(std::string_view s, size_t* i) {
  const auto lead = static_cast<unsigned char>(s[(*i)++]);
  int extra = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  if (lead >= 0x80 && extra == 0) return 0xfffd;
  uint32_t cp = extra == 3 ? lead & 0x07 : extra == 2 ? lead & 0x0f : extra == 1 ? lead & 0x1f : lead;
  for (; extra > 0; --extra) {
    if (*i >= s.size() || (static_cast<unsigned char>(s[*i]) & 0xc0) != 0x80) return 0xfffd;
    cp = (cp << 6) | (static_cast<unsigned char>(s[(*i)++]) & 0x3f);
  }
  return cp;
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

struct DistributionEntry {
  Distribution distribution;
  std::string_view name;
};

constexpr DistributionEntry kDistributions[] = {
    {Distribution::kConstant, "constant"},
    {Distribution::kCategorical, "categorical"},
    {Distribution::kIntUniform, "int_uniform"},
    {Distribution::kUniform, "uniform"},
    {Distribution::kQUniform, "q_uniform"},
    {Distribution::kLogUniform, "log_uniform"},
    {Distribution::kLogUniformValues, "log_uniform_values"},
    {Distribution::kQLogUniform, "q_log_uniform"},
    {Distribution::kQLogUniformValues, "q_log_uniform_values"},
    {Distribution::kNormal, "normal"},
    {Distribution::kQNormal, "q_normal"},
    {Distribution::kLogNormal, "log_normal"},
    {Distribution::kQLogNormal, "q_log_normal"},
};

constexpr std::string_view kCategoricalWithProbabilities = "categorical_w_probabilities";

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Rounds to a multiple of q, half to even like NumPy's round; an integer when q was written as one.
nlohmann::json Quantize(double x, const Parameter& p) {
  const double r = std::nearbyint(x / p.q) * p.q;
  if (p.q_is_integer && std::fabs(r) < 9.0e18) return nlohmann::json(static_cast<int64_t>(std::llround(r)));
  return nlohmann::json(r);
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// A run's key: the hash of its values, and for random search of its index too.
std::string RunKey(const nlohmann::json& values, std::optional<int64_t> index) {
  std::string text = values.dump();
  if (index) text += fmt::format("#{}", *index);
  return ShortHash(text, 12);
}

// W&B's ${envvar:NAME} (NAME of [A-Z0-9_]), anywhere in an item; an unset variable leaves NAME.
std::string ReplaceEnvVars(std::string_view item, const CommandContext& context) {
  constexpr std::string_view kOpen = "${envvar:";
  std::string out;
  size_t i = 0;
  while (i < item.size()) {
    const size_t at = item.find(kOpen, i);
    if (at == std::string_view::npos) break;
    size_t end = at + kOpen.size();
    while (end < item.size() &&
           ((item[end] >= 'A' && item[end] <= 'Z') || (item[end] >= '0' && item[end] <= '9') || item[end] == '_')) {
      ++end;
    }
    out += item.substr(i, at - i);
    if (end < item.size() && item[end] == '}') {
      const std::string name(item.substr(at + kOpen.size(), end - at - kOpen.size()));
      std::optional<std::string> value = context.getenv ? context.getenv(name) : std::nullopt;
      out += value.value_or(name);
      i = end + 1;
    } else {
      out += kOpen;
      i = at + kOpen.size();
    }
  }
  out += item.substr(i);
  return out;
}

// One W&B args macro for every parameter, in name order.
void AppendArgs(std::string_view macro, const nlohmann::json& values, std::vector<std::string>* argv) {
  for (const auto& [name, value] : values.items()) {
    if (macro == "args") {
      argv->push_back(fmt::format("--{}={}", name, PyStr(value)));
    } else if (macro == "args_no_hyphens") {
      argv->push_back(fmt::format("{}={}", name, PyStr(value)));
    } else if (macro == "args_no_equals") {
      argv->push_back("--" + name);
      argv->push_back(PyStr(value));
    } else if (!value.is_boolean()) {  // args_no_boolean_flags
      argv->push_back(fmt::format("--{}={}", name, PyStr(value)));
    } else if (value.get<bool>()) {
      argv->push_back("--" + name);
    }
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

std::string_view DistributionName(Distribution d) {
  for (const auto& entry : kDistributions) {
    if (entry.distribution == d) return entry.name;
  }
  return "?";
}

std::optional<Distribution> DistributionFromName(std::string_view name) {
  if (name == kCategoricalWithProbabilities) return Distribution::kCategorical;
  for (const auto& entry : kDistributions) {
    if (entry.name == name) return entry.distribution;
  }
  return std::nullopt;
}

std::vector<std::string> DistributionNames() {
  std::vector<std::string> names;
  for (const auto& entry : kDistributions) names.emplace_back(entry.name);
  names.emplace_back(kCategoricalWithProbabilities);
  return names;
}

double Rng::Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == std::numeric_limits<uint64_t>::max()) return static_cast<int64_t>(Next());
  const uint64_t n = span + 1;
  // Rejects the first 2^64 mod n outputs so that every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  while (true) {
    const uint64_t r = Next();
    if (r >= threshold) return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % n);
  }
}

double Rng::StandardNormal() {
  const double u1 = 1.0 - Uniform01();  // (0, 1]: log stays finite
  const double u2 = Uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t StreamSeed(uint64_t seed, uint64_t index) { return SplitMix64(seed ^ SplitMix64(index)); }

nlohmann::json Sample(const Parameter& p, Rng& rng) {
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.Uniform01(); };
  switch (p.distribution) {
    case Distribution::kConstant: return p.values.at(0);
    case Distribution::kCategorical: {
      if (p.probabilities.empty()) {
        return p.values.at(static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(p.values.size()) - 1)));
      }
      const double u = rng.Uniform01();
      double cumulative = 0;
      for (size_t i = 0; i < p.values.size(); ++i) {
        cumulative += p.probabilities[i];
        if (u < cumulative) return p.values[i];
      }
      return p.values.back();  // u above a sum that rounding left just under 1
    }
    case Distribution::kIntUniform: return rng.UniformInt(static_cast<int64_t>(p.min), static_cast<int64_t>(p.max));
    case Distribution::kUniform: return uniform(p.min, p.max);
    case Distribution::kQUniform: return Quantize(uniform(p.min, p.max), p);
    case Distribution::kLogUniform: return std::exp(uniform(p.min, p.max));
    case Distribution::kLogUniformValues: return std::exp(uniform(std::log(p.min), std::log(p.max)));
    case Distribution::kQLogUniform: return Quantize(std::exp(uniform(p.min, p.max)), p);
    case Distribution::kQLogUniformValues: return Quantize(std::exp(uniform(std::log(p.min), std::log(p.max))), p);
    case Distribution::kNormal: return p.mu + p.sigma * rng.StandardNormal();
    case Distribution::kQNormal: return Quantize(p.mu + p.sigma * rng.StandardNormal(), p);
    case Distribution::kLogNormal: return std::exp(p.mu + p.sigma * rng.StandardNormal());
    case Distribution::kQLogNormal: return Quantize(std::exp(p.mu + p.sigma * rng.StandardNormal()), p);
  }
  return nullptr;
}

Result<std::vector<nlohmann::json>> GridValues(const Parameter& p, size_t limit) {
  auto too_many = [&](double count) {
    auto bound = [&](double v) {
      return p.bounds_are_integers ? std::to_string(static_cast<int64_t>(v)) : PyFloatRepr(v);
    };
    return UsageError(
        fmt::format("{} from {} to {} gives {:.0f} grid values, more than the {} runs a sweep may "
                    "plan",
                    DistributionName(p.distribution), bound(p.min), bound(p.max), count, limit));
  };
  switch (p.distribution) {
    case Distribution::kConstant:
    case Distribution::kCategorical:
      if (!p.probabilities.empty()) {
        return UsageError(
            "grid search visits every value once, so 'probabilities' cannot apply; remove them or "
            "use method: random");
      }
      return p.values;
    case Distribution::kIntUniform: {
      if (p.max - p.min + 1 > static_cast<double>(limit)) return too_many(p.max - p.min + 1);
      std::vector<nlohmann::json> values;
      for (auto v = static_cast<int64_t>(p.min); v <= static_cast<int64_t>(p.max); ++v) values.emplace_back(v);
      return values;
    }
    case Distribution::kQUniform: {
      // NumPy's arange(min, max, q): ceil((max - min) / q) values, max itself excluded.
      const double count = std::ceil((p.max - p.min) / p.q);
      if (count > static_cast<double>(limit)) return too_many(count);
      const auto n = static_cast<int64_t>(count);
      const bool integers = p.bounds_are_integers && p.q_is_integer;
      std::vector<nlohmann::json> values;
      for (int64_t i = 0; i < n; ++i) {
        const double v = p.min + static_cast<double>(i) * p.q;
        values.push_back(integers ? nlohmann::json(static_cast<int64_t>(std::llround(v))) : nlohmann::json(v));
      }
      return values;
    }
    default:
      return UsageError(
          fmt::format("grid search needs discrete values, and '{}' is continuous; give 'values', use int_uniform or "
                      "q_uniform, or use method: random",
                      DistributionName(p.distribution)));
  }
}

std::string ShortHash(std::string_view text, size_t hex_digits) {
  return fmt::format("{:016x}", Fnv1a64(text)).substr(0, std::min<size_t>(hex_digits, 16));
}

std::vector<RunParams> GridRuns(const std::vector<Parameter>& params,
                                const std::vector<std::vector<nlohmann::json>>& axes, int64_t count) {
  std::vector<RunParams> runs;
  if (axes.size() != params.size() || std::any_of(axes.begin(), axes.end(), [](auto& a) { return a.empty(); })) {
    return runs;
  }
  // A mixed-radix counter over the axes, the last digit turning fastest.
  std::vector<size_t> digit(axes.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    nlohmann::json values = nlohmann::json::object();
    for (size_t a = 0; a < digit.size(); ++a) values[params[a].name] = axes[a][digit[a]];
    runs.push_back(RunParams{i, RunKey(values, std::nullopt), std::move(values)});
    size_t a = digit.size();
    while (a > 0 && ++digit[a - 1] == axes[a - 1].size()) digit[--a] = 0;
    if (a == 0) break;  // every combination visited
  }
  return runs;
}

std::vector<RunParams> RandomRuns(const std::vector<Parameter>& params, int64_t count, uint64_t seed) {
  std::vector<RunParams> runs;
  for (int64_t i = 0; i < count; ++i) {
    Rng rng(StreamSeed(seed, static_cast<uint64_t>(i)));
    nlohmann::json values = nlohmann::json::object();
    for (const auto& p : params) values[p.name] = Sample(p, rng);
    runs.push_back(RunParams{i, RunKey(values, i), std::move(values)});
  }
  return runs;
}

CommandContext CommandContext::FromSystem() {
  CommandContext context;
  context.interpreter = "python3";
  const char* path = std::getenv("PATH");
  for (const auto& dir : Split(path ? path : "", ':')) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/python";
    if (access(candidate.c_str(), X_OK) == 0) {
      context.interpreter = "python";
      break;
    }
  }
  context.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
  return context;
}

const std::vector<std::string>& CommandMacros() {
  static const std::vector<std::string> macros = {
      "env",      "interpreter", "program", "args", "args_no_hyphens", "args_no_boolean_flags", "args_no_equals",
      "args_json"};
  return macros;
}

std::string_view MacroName(std::string_view item) {
  if (item.size() < 3 || !StartsWith(item, "${") || item.back() != '}') return {};
  return item.substr(2, item.size() - 3);
}

Result<std::string> FillPlaceholders(std::string_view item,
                                     const std::function<std::optional<std::string>(std::string_view)>& lookup,
                                     const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < item.size(); ++i) {
    const char c = item[i];
    if ((c == '{' || c == '}') && i + 1 < item.size() && item[i + 1] == c) {
      out += c;
      ++i;
    } else if (c == '{') {
      const size_t close = item.find('}', i);
      if (close == std::string_view::npos) {
        return UsageError(fmt::format("command item '{}': unmatched '{{'; write {{{{ for a literal brace", item));
      }
      const std::string_view name = item.substr(i + 1, close - i - 1);
      auto value = lookup(name);
      if (!value) {
        auto close_name = ClosestMatch(name, names);
        return UsageError(fmt::format("command item '{}': {{{}}} is not a --grid parameter{}", item, name,
                                      close_name ? fmt::format(" (did you mean '{}'?)", *close_name) : ""));
      }
      out += *value;
      i = close;
    } else if (c == '}') {
      return UsageError(fmt::format("command item '{}': unmatched '}}'; write }}}} for a literal brace", item));
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> RenderArgv(const std::vector<std::string>& command, CommandStyle style,
                                    const std::string& program, const nlohmann::json& values,
                                    const CommandContext& context) {
  std::vector<std::string> argv;
  if (style == CommandStyle::kPlaceholders) {
    auto lookup = [&](std::string_view name) -> std::optional<std::string> {
      auto it = values.find(std::string(name));
      if (it == values.end()) return std::nullopt;
      return PyStr(*it);
    };
    for (const auto& item : command) {
      auto filled = FillPlaceholders(item, lookup, {});
      argv.push_back(filled.ok() ? filled.value() : item);
    }
    return argv;
  }
  for (const auto& template_item : command) {
    const std::string item = ReplaceEnvVars(template_item, context);
    const std::string_view macro = MacroName(item);
    if (macro == "env") {
      argv.push_back("/usr/bin/env");
    } else if (macro == "interpreter") {
      argv.push_back(context.interpreter);
    } else if (macro == "program") {
      argv.push_back(program);
    } else if (macro == "args_json") {
      argv.push_back(PyJsonDumps(values));
    } else if (StartsWith(macro, "args") &&
               std::find(CommandMacros().begin(), CommandMacros().end(), macro) != CommandMacros().end()) {
      AppendArgs(macro, values, &argv);
    } else {
      argv.push_back(item);
    }
  }
  return argv;
}

}  // namespace sat::sweep
