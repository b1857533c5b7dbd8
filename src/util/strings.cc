#include "util/strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace sat {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string ToLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    size_t d = EditDistance(ToLower(word), ToLower(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  size_t allowed = std::max<size_t>(2, word.size() / 3);
  if (!best || best_d > allowed) return std::nullopt;
  return best;
}

std::string ShortHash(std::string_view text, size_t hex_digits) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h).substr(0, std::min<size_t>(hex_digits, 16));
}

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(tmp.c_str(), &end);
  if (errno != 0 || end != tmp.c_str() + tmp.size()) return std::nullopt;
  return v;
}

std::optional<long long> ParseInt(std::string_view s) {
  s = Trim(s);
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

namespace {

std::optional<double> ParseUnboundedDuration(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  if (auto plain = ParseDouble(s)) return plain;
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    if (j == i) return std::nullopt;
    auto num = ParseDouble(s.substr(i, j - i));
    if (!num) return std::nullopt;
    size_t k = j;
    while (k < s.size() && std::isalpha(static_cast<unsigned char>(s[k]))) ++k;
    std::string_view unit = s.substr(j, k - j);
    double mult;
    if (unit == "ms") mult = 0.001;
    else if (unit == "s") mult = 1;
    else if (unit == "m" || unit == "min") mult = 60;
    else if (unit == "h") mult = 3600;
    else return std::nullopt;
    total += *num * mult;
    i = k;
  }
  return total;
}

}  // namespace

std::optional<double> ParseDuration(std::string_view s) {
  std::optional<double> seconds = ParseUnboundedDuration(s);
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > kMaxDurationS) return std::nullopt;
  return seconds;
}

bool IsNoLimit(std::string_view s) { return ToLower(Trim(s)) == "none"; }

std::string JoinNonEmpty(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

namespace {

// "1234567" -> "1,234,567".
std::string GroupDigits(std::string_view digits) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string GroupThousands(uint64_t value) { return GroupDigits(std::to_string(value)); }

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return "n/a";
  const double magnitude = std::fabs(value);
  // The thresholds are where rounding would carry into another digit: 9.996 is "10.0", not "10.00".
  if (magnitude < 9.995) return fmt::format("{:.2f}", value);
  if (magnitude < 99.95) return fmt::format("{:.1f}", value);
  const std::string grouped = GroupDigits(fmt::format("{:.0f}", magnitude));
  return value < 0 ? "-" + grouped : grouped;
}

std::string FormatRate(double samples_per_s) { return FormatNumber(samples_per_s) + " samples/s"; }

std::string FormatShare(double share) { return FormatPct(share * 100); }

std::string FormatPct(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  if (pct != 0 && std::fabs(pct) < 0.95) return fmt::format("{:.1f}%", pct);
  return fmt::format("{:.0f}%", pct);
}

std::string FormatGiB(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (std::fabs(bytes) >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0 || std::fabs(bytes) >= 99.95) return fmt::format("{:.0f} {}", bytes, kUnits[unit]);
  return fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

std::string FormatTimes(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return std::fabs(ratio) < 9.995 ? fmt::format("{:.2f}×", ratio) : fmt::format("{:.0f}×", ratio);
}

std::string FormatDuration(double s) {
  if (s < 120) return fmt::format("{:.1f}s", s);
  const long total = static_cast<long>(s);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

}  // namespace sat
