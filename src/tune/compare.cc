#include "tune/compare.h"

#include <fmt/core.h>

#include <cmath>

#include "util/strings.h"

namespace sat::tune {

TrialScore ScoreOf(const Trial& t) {
  if (t.score) return *t.score;
  return TrialScore{t.samples_per_s, t.ci_low, t.ci_high, "samples/s", ""};
}

bool Reliable(const Trial& t) {
  const TrialScore s = ScoreOf(t);
  return Succeeded(t) && !t.too_slow && (t.converged || (t.settled && t.steady_steps >= kMinSteadySteps)) &&
         s.high > 0 && s.low <= s.value && s.value <= s.high;
}

std::string UnreliableWhy(const Trial& t) {
  if (!Succeeded(t) || Reliable(t)) return "";
  if (t.too_slow)
    return fmt::format("is too slow to measure in this budget ({} steady step{} of the {} needed)",
                       t.steady_steps, t.steady_steps == 1 ? "" : "s", kMinSteadySteps);
  if (t.steady_steps < kMinSteadySteps)
    return fmt::format("has too few steady steps ({} of the {} needed)", t.steady_steps, kMinSteadySteps);
  if (!t.unsettled_why.empty()) return fmt::format("did not settle ({})", t.unsettled_why);
  if (t.score && t.score->value <= 0 && !t.score->missing.empty()) return t.score->missing;
  if (t.ci_high > t.ci_low && t.samples_per_s > 0)
    return fmt::format("did not settle (±{})", FormatShare((t.ci_high - t.ci_low) / 2 / t.samples_per_s));
  return "did not settle";
}

Order Compare(const Trial& a, const Trial& b) {
  if (!Reliable(a) || !Reliable(b)) return Order::kNotDistinguishable;
  const TrialScore sa = ScoreOf(a), sb = ScoreOf(b);
  if (sa.low > sb.high) return Order::kFaster;
  if (sa.high < sb.low) return Order::kSlower;
  return Order::kNotDistinguishable;
}

bool FasterBy(const Trial& a, const Trial& b, double gain) {
  return Compare(a, b) == Order::kFaster && ScoreOf(a).value >= ScoreOf(b).value * (1 + gain);
}

std::optional<double> RatioIfDistinguishable(const Trial& a, const Trial& b) {
  if (Compare(a, b) == Order::kNotDistinguishable) return std::nullopt;
  return ScoreOf(a).value / ScoreOf(b).value;
}

std::string RateWithInterval(const Trial& t) {
  const TrialScore s = ScoreOf(t);
  if (t.score && s.value <= 0) return fmt::format("no {}", s.unit);
  std::string text = fmt::format("{} {}", FormatNumber(s.value), s.unit);
  if (s.high > s.low && s.value > 0) text += fmt::format(" ±{}", FormatShare((s.high - s.low) / 2 / s.value));
  return text;
}

std::string NotDistinguishable(const Trial& a, const Trial& b, const std::string& from) {
  std::string why;
  if (std::string wa = UnreliableWhy(a); !wa.empty()) why = fmt::format("trial {} {}", a.id, wa);
  else if (std::string wb = UnreliableWhy(b); !wb.empty()) why = fmt::format("trial {} {}", b.id, wb);
  else why = "the 95% intervals overlap";
  return fmt::format("not distinguishable{} ({} against {}: {})", from.empty() ? "" : " " + from,
                     RateWithInterval(a), RateWithInterval(b), why);
}

std::optional<int64_t> FastestReliable(const std::vector<TrialPoint>& points) {
  const TrialPoint* best = nullptr;
  for (const auto& p : points)
    if (Reliable(*p.trial) && (!best || ScoreOf(*p.trial).value > ScoreOf(*best->trial).value)) best = &p;
  if (!best) return std::nullopt;
  return best->x;
}

std::optional<int64_t> SmallestWithinReliable(const std::vector<TrialPoint>& points, double tolerance) {
  std::optional<int64_t> fastest = FastestReliable(points);
  if (!fastest) return std::nullopt;
  double best = 0;
  for (const auto& p : points)
    if (p.x == *fastest) best = ScoreOf(*p.trial).value;
  std::optional<int64_t> out;
  for (const auto& p : points)
    if (Reliable(*p.trial) && ScoreOf(*p.trial).value >= (1 - tolerance) * best && (!out || p.x < *out)) out = p.x;
  return out;
}

}  // namespace sat::tune
