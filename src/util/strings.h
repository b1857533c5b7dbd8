// Small string helpers shared by every module.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sat {

std::vector<std::string> Split(std::string_view s, char sep);
std::string_view Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
std::string ToLower(std::string_view s);

// The first `hex_digits` (at most 16) hex digits of the 64-bit FNV-1a hash of `text`: a stable id (the same on
// every machine and build), not a defence against anyone crafting collisions.
std::string ShortHash(std::string_view text, size_t hex_digits);

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if one is close enough to be a plausible typo
// (distance at most a third of the word's length, and at least 2 allowed).
std::optional<std::string> ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// Parses the whole string as a number; nullopt on any trailing junk or overflow.
std::optional<double> ParseDouble(std::string_view s);
std::optional<long long> ParseInt(std::string_view s);

// The longest duration saturate accepts anywhere (a year). Longer is no real limit, and a deadline computed in
// nanoseconds from it would overflow (every attempt of a sweep would time out at once).
inline constexpr double kMaxDurationS = 366.0 * 24 * 3600;

// Parses a duration: "90", "90s", "1500ms", "2m", "1h", "1m30s". Result in seconds, finite, in [0, kMaxDurationS];
// nullopt for anything else ("inf", "nan", "-5s", "1e300").
std::optional<double> ParseDuration(std::string_view s);

// Whether a limit is given as "no limit". "none" is its one spelling (a duration of 0 or "inf" is not).
bool IsNoLimit(std::string_view s);

// Lists and numbers as reports and sentences write them (probe, tune, sweep). Numbers round to nearest, ties to
// even, as fmt's fixed formatting does: 1234.5 -> "1,234". Not finite: "n/a".
std::string JoinNonEmpty(const std::vector<std::string>& parts, std::string_view separator);  // skips ""
std::string GroupThousands(uint64_t value);  // 2000 -> "2,000"
// Three significant digits at most, grouped above 999: 1840.2 -> "1,840"; 42.13 -> "42.1"; 3.421 -> "3.42";
// 9.996 -> "10.0" (never "10.00"); 99.96 -> "100".
std::string FormatNumber(double value);
std::string FormatRate(double samples_per_s);  // 1840.2 -> "1,840 samples/s"
// A percentage: 37.5 -> "38%"; below 1% one decimal: 0.42 -> "0.4%".
std::string FormatPct(double pct);
std::string FormatShare(double share);  // a share as a percentage: 0.712 -> "71%", 0.0042 -> "0.4%"
std::string FormatGiB(double bytes);  // 10952166604 -> "10.2 GiB"
// Binary units, one decimal below 100 of the unit: 512 -> "512 B", 1536 -> "1.5 KiB", 314572800 -> "300 MiB".
std::string FormatBytes(double bytes);
std::string FormatTimes(double ratio);  // a ratio: 1.6 -> "1.60×", 12.3 -> "12×"
// A span of time: 42.3 -> "42.3s" (below two minutes), 754 -> "12m34s", 7500 -> "2h05m".
std::string FormatDuration(double seconds);

}  // namespace sat
