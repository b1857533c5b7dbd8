#include "tune/text.h"

#include <fmt/core.h>

#include <cmath>

namespace sat::tune {

std::string Number(double v) {
  if (!std::isfinite(v)) return "n/a";
  double a = std::fabs(v);
  if (a < 10) return fmt::format("{:.2f}", v);
  if (a < 100) return fmt::format("{:.1f}", v);
  std::string digits = fmt::format("{:.0f}", a);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string Rate(double samples_per_s) { return Number(samples_per_s) + " samples/s"; }

std::string Bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  if (u == 0 || std::fabs(bytes) >= 100) return fmt::format("{:.0f} {}", bytes, units[u]);
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

std::string Times(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return ratio < 10 ? fmt::format("{:.2f}×", ratio) : fmt::format("{:.0f}×", ratio);
}

std::string Percent(double share) {
  double p = share * 100;
  if (std::fabs(p) < 1 && p != 0) return fmt::format("{:.1f}%", p);
  return fmt::format("{:.0f}%", p);
}

}  // namespace sat::tune
