#include "util/range.h"

#include <fmt/core.h>

#include <cmath>

namespace sat {

bool Interval::Contains(double v) const {
  if (!std::isfinite(v)) return false;
  const bool above_lo = lo_open ? v > lo : v >= lo;
  const bool below_hi = hi_open ? v < hi : v <= hi;
  return above_lo && below_hi;
}

std::string Interval::Text() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) return fmt::format("in {}{:g}, {:g}{}", lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
  if (has_lo && lo == 0 && lo_open) return "positive";
  if (has_lo) return fmt::format("{} {:g}", lo_open ? "above" : "at least", lo);
  if (has_hi) return fmt::format("{} {:g}", hi_open ? "below" : "at most", hi);
  return "a number";
}

Status CheckInRange(std::string_view what, double value, const Interval& allowed, std::string_view hint) {
  if (allowed.Contains(value)) return Status::Ok();
  std::string message = fmt::format("{} {:g} must be {}", what, value, allowed.Text());
  if (!hint.empty()) message += fmt::format(" ({})", hint);
  return UsageError(std::move(message));
}

Status CheckAllInRange(std::initializer_list<RangeCheck> checks, std::string_view prefix) {
  for (const RangeCheck& c : checks) {
    if (c.allowed.Contains(c.value)) continue;
    return CheckInRange(fmt::format("{}{}", prefix, c.what), c.value, c.allowed, c.hint);
  }
  return Status::Ok();
}

}  // namespace sat
