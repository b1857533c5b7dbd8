#include "tune/levels.h"

#include <algorithm>
#include <cmath>

namespace sat::tune {

std::vector<int64_t> DoublingLevels(int64_t lo, int64_t hi) {
  std::vector<int64_t> out = {lo};
  for (int64_t p = 1; p < hi && p <= (INT64_MAX / 2); p *= 2)
    if (p > lo) out.push_back(p);
  if (hi > lo) out.push_back(hi);
  return out;
}

std::vector<int64_t> SpreadLevels(int64_t lo, int64_t hi, int count) {
  std::vector<int64_t> out;
  if (count < 2 || hi <= lo) return {lo};
  for (int i = 0; i < count; ++i) {
    double f = static_cast<double>(i) / (count - 1);
    double v = lo > 0 ? lo * std::pow(static_cast<double>(hi) / lo, f) : lo + f * (hi - lo);
    int64_t r = std::clamp<int64_t>(std::llround(v), lo, hi);
    if (out.empty() || r > out.back()) out.push_back(r);
  }
  if (out.back() != hi) out.push_back(hi);
  return out;
}

std::vector<KnobValue> GridLevels(const KnobSpec& spec) {
  std::vector<KnobValue> out;
  if (spec.kind == KnobKind::kChoice) {
    for (const auto& c : spec.choices) out.emplace_back(c);
    return out;
  }
  std::vector<int64_t> levels;
  if (spec.role == KnobRole::kBatchSize) levels = DoublingLevels(spec.lo, spec.hi);
  else if (spec.role == KnobRole::kWorkers && spec.hi - spec.lo < 9)
    for (int64_t w = spec.lo; w <= spec.hi; ++w) levels.push_back(w);
  else if (spec.role == KnobRole::kWorkers) levels = DoublingLevels(spec.lo, spec.hi);
  else levels = SpreadLevels(spec.lo, spec.hi, 5);
  for (int64_t v : levels) out.emplace_back(v);
  return out;
}

std::optional<int64_t> BisectMidpoint(int64_t ok, int64_t bad, int64_t multiple) {
  multiple = std::max<int64_t>(1, multiple);
  int64_t mid = ok + (bad - ok) / 2;
  mid -= mid % multiple;
  if (mid <= ok) mid = (ok / multiple + 1) * multiple;
  if (mid <= ok || mid >= bad) return std::nullopt;
  return mid;
}

std::optional<int64_t> Fastest(const std::vector<Point>& points) {
  std::optional<Point> best;
  for (const auto& p : points)
    if (!best || p.rate > best->rate || (p.rate == best->rate && p.x < best->x)) best = p;
  if (!best) return std::nullopt;
  return best->x;
}

std::optional<int64_t> SmallestWithin(const std::vector<Point>& points, double tolerance) {
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.rate);
  std::optional<int64_t> out;
  for (const auto& p : points)
    if (p.rate >= (1 - tolerance) * best && (!out || p.x < *out)) out = p.x;
  return out;
}

}  // namespace sat::tune
