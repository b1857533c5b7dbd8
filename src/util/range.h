// Ranges that numbers given by people (command-line flags, fields of a file) must lie in, and the one sentence
// that says a value does not: "--target 2 must be in (0, 1) (0.03 = ±3%)", "run 3 ('a'): mem_gib -1 must be
// positive". Pure functions.
#pragma once

#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "util/result.h"

namespace sat {

// The numbers from lo to hi; an open end leaves that bound itself out, an infinite bound is no bound.
struct Interval {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;

  // False for NaN and the infinities: every number people give is finite.
  bool Contains(double v) const;
  // As a sentence ends after "must be": "positive", "at least 1", "above 2", "at most 8", "in [0, 1)", "a number".
  std::string Text() const;
};

inline Interval AtLeast(double lo) { return {.lo = lo}; }
inline Interval Above(double lo) { return {.lo = lo, .lo_open = true}; }
inline Interval Closed(double lo, double hi) { return {.lo = lo, .hi = hi}; }
inline Interval Open(double lo, double hi) { return {.lo = lo, .hi = hi, .lo_open = true, .hi_open = true}; }
inline Interval LeftOpen(double lo, double hi) { return {.lo = lo, .hi = hi, .lo_open = true}; }    // (lo, hi]
inline Interval RightOpen(double lo, double hi) { return {.lo = lo, .hi = hi, .hi_open = true}; }  // [lo, hi)

// OK when `allowed` contains `value`; else a usage error (exit code 2) "<what> <value> must be <allowed>", with
// " (<hint>)" after it when a hint is given. `what` names the input: a flag ("--target") or a field.
Status CheckInRange(std::string_view what, double value, const Interval& allowed, std::string_view hint = "");

struct RangeCheck {
  std::string_view what;
  double value;
  Interval allowed;
  std::string_view hint = "";
};

// CheckInRange of each in order: the first that fails, or OK. `prefix` goes before every `what`, e.g. "run 3
// ('a'): ".
Status CheckAllInRange(std::initializer_list<RangeCheck> checks, std::string_view prefix = "");

}  // namespace sat
