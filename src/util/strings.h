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

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if one is close enough to be a plausible typo
// (distance at most a third of the word's length, and at least 2 allowed).
std::optional<std::string> ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// Parses the whole string as a number; nullopt on any trailing junk or overflow.
std::optional<double> ParseDouble(std::string_view s);
std::optional<long long> ParseInt(std::string_view s);

// Parses a duration: "90", "90s", "1500ms", "2m", "1h", "1m30s". Result in seconds.
std::optional<double> ParseDuration(std::string_view s);

// Lists and numbers as reports and sentences write them.
std::string JoinNonEmpty(const std::vector<std::string>& parts, std::string_view separator);  // skips ""
std::string GroupThousands(uint64_t value);  // 2000 -> "2,000"
std::string FormatNumber(double value);  // 1840.2 -> "1,840"; 42.13 -> "42.1"; 3.421 -> "3.42"; "n/a" if not finite
std::string FormatShare(double share);   // 0.712 -> "71%" (a share of 1 is 100%); "n/a" if not finite
std::string FormatPct(double pct);       // a percentage: 37.5 -> "38%"
std::string FormatGiB(double bytes);     // 10952166604 -> "10.2 GiB"; "n/a" if not finite

}  // namespace sat
