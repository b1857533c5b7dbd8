// The values a search tries, and the picks it makes from measured points. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tune/knob.h"

namespace sat::tune {

// lo, then the powers of two above it, then hi: 0:8 -> 0 1 2 4 8; 3:12 -> 3 4 8 12. Cheap scans of a range.
std::vector<int64_t> DoublingLevels(int64_t lo, int64_t hi);

// At most `count` levels spread geometrically over lo..hi (evenly when lo is 0), both ends included, distinct.
std::vector<int64_t> SpreadLevels(int64_t lo, int64_t hi, int count);

// The values an exhaustive grid gives a knob: every choice; batch sizes as DoublingLevels; workers every integer
// (DoublingLevels beyond 9 values); other ranges SpreadLevels(.., 5).
std::vector<KnobValue> GridLevels(const KnobSpec& spec);

// The next size to try between a size that fits (`ok`) and one that does not (`bad`): the midpoint rounded down
// to a multiple of `multiple`; nullopt once no such multiple lies strictly between them.
std::optional<int64_t> BisectMidpoint(int64_t ok, int64_t bad, int64_t multiple);

struct Point {
  int64_t x = 0;
  double rate = 0;
};

// The smallest x whose rate is within `tolerance` (a share) of the best rate; nullopt for no points.
std::optional<int64_t> SmallestWithin(const std::vector<Point>& points, double tolerance);
// The x of the highest rate (the smaller x on a tie); nullopt for no points.
std::optional<int64_t> Fastest(const std::vector<Point>& points);

}  // namespace sat::tune
