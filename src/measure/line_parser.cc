#define PCRE2_CODE_UNIT_WIDTH 8
#include "measure/line_parser.h"

#include <fmt/format.h>
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "util/strings.h"

namespace sat::measure {
namespace {

// What a named group holds. Rates and step times make observations; data times only a share.
enum class Meaning { kSamplesPerS, kItersPerS, kStepS, kDataS };

struct KnownGroup {
  const char* name;
  Meaning meaning;
  double scale;  // to samples/s, iterations/s or seconds
};

// In order of preference: the first that matched a number wins.
constexpr std::array<KnownGroup, 7> kGroups = {{
    {"samples_per_s", Meaning::kSamplesPerS, 1},
    {"it_per_s", Meaning::kItersPerS, 1},
    {"step_s", Meaning::kStepS, 1},
    {"s_per_it", Meaning::kStepS, 1},
    {"ms_per_step", Meaning::kStepS, 1e-3},
    {"data_s", Meaning::kDataS, 1},
    {"data_ms", Meaning::kDataS, 1e-3},
}};

// A decimal number as programs print them: 12, 12.5, .5, 1e-05.
#define SAT_NUM R"((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
// tqdm's rate field: "12.34it/s", or "1.23s/it" below one iteration per second.
#define SAT_TQDM_RATE "(?:(?P<it_per_s>" SAT_NUM ")it/s|(?P<s_per_it>" SAT_NUM ")s/it)\\b"

struct Preset {
  const char* name;
  const char* pattern;
};

constexpr std::array<Preset, 4> kPresets = {{
    {"tqdm", SAT_TQDM_RATE},
    // Lightning's training bar (tqdm or rich) starts with "Epoch N"; its validation bars are left out.
    {"lightning", "Epoch \\d+\\b.*?" SAT_TQDM_RATE},
    // Keras prints the mean step time at the end of each epoch: "100/100 [====] - 2s 20ms/step - loss: 0.1".
    {"keras", "(?:(?P<ms_per_step>" SAT_NUM ")ms/step|(?P<step_s>" SAT_NUM ")s/step)\\b"},
    {"saturate-example", "samples/s\\s+(?P<samples_per_s>" SAT_NUM ")(?:\\s+step_s\\s+(?P<step_s>" SAT_NUM
                         "))?(?:\\s+data_s\\s+(?P<data_s>" SAT_NUM "))?(?:\\s+metrics_s\\s+(?P<phase_metrics_s>" SAT_NUM
                         "))?"},
}};

#undef SAT_TQDM_RATE
#undef SAT_NUM

// Groups named phase_<name>_s or phase_<name>_ms time a named part of the step.
std::optional<std::pair<std::string, double>> PhaseGroupName(std::string_view group) {
  if (!StartsWith(group, "phase_")) return std::nullopt;
  std::string_view rest = group.substr(6);
  for (auto [suffix, scale] : {std::pair<std::string_view, double>{"_ms", 1e-3}, {"_s", 1.0}}) {
    if (rest.size() > suffix.size() && rest.substr(rest.size() - suffix.size()) == suffix)
      return std::pair<std::string, double>{std::string(rest.substr(0, rest.size() - suffix.size())), scale};
  }
  return std::nullopt;
}

std::vector<std::string> KnownGroupNames() {
  std::vector<std::string> names;
  for (const KnownGroup& g : kGroups) names.emplace_back(g.name);
  return names;
}

// The names of the expression's named groups, from PCRE2's name table.
std::vector<std::string> NamedGroups(const pcre2_code* code) {
  uint32_t count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
  std::vector<std::string> names;
  // Each entry: the group number in two bytes, then the zero-terminated name.
  for (uint32_t i = 0; i < count; ++i) names.emplace_back(reinterpret_cast<const char*>(table + i * entry_size + 2));
  return names;
}

// A named group that is not a known one but close to one is almost certainly a typo.
Status CheckGroupSpelling(const pcre2_code* code) {
  const std::vector<std::string> known = KnownGroupNames();
  for (const std::string& name : NamedGroups(code)) {
    if (std::find(known.begin(), known.end(), name) != known.end() || PhaseGroupName(name)) continue;
    if (std::optional<std::string> close = ClosestMatch(name, known)) {
      return UsageError(fmt::format("group '{}' is not one saturate reads; did you mean '{}'?", name, *close));
    }
  }
  return Status::Ok();
}

Result<std::shared_ptr<const pcre2_code>> Compile(const std::string& pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // UTF so that progress-bar characters are single characters; invalid UTF-8 in output still matches.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (code == nullptr) {
    std::array<PCRE2_UCHAR, 256> message{};
    pcre2_get_error_message(error, message.data(), message.size());
    return UsageError(fmt::format("bad regular expression '{}': {} at offset {}", pattern,
                                  reinterpret_cast<const char*>(message.data()), offset));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // best effort: without JIT, matching is slower, not wrong
  return std::shared_ptr<const pcre2_code>(code,
                                           [](const pcre2_code* c) { pcre2_code_free(const_cast<pcre2_code*>(c)); });
}

// The group as a non-negative number, if it took part in the match and holds one.
std::optional<double> GroupValue(std::string_view line, const PCRE2_SIZE* ovector, int group) {
  if (group <= 0) return std::nullopt;
  const PCRE2_SIZE begin = ovector[2 * group], end = ovector[2 * group + 1];
  if (begin == PCRE2_UNSET || end < begin) return std::nullopt;
  std::optional<double> value = ParseDouble(line.substr(begin, end - begin));
  if (!value || !std::isfinite(*value) || *value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::vector<std::string> LineParser::PresetNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

Result<LineParser> LineParser::Create(std::string_view spec, std::optional<double> batch_size) {
  std::string pattern(spec);
  for (const Preset& p : kPresets) {
    if (spec == p.name) pattern = p.pattern;
  }
  if (batch_size && (!std::isfinite(*batch_size) || *batch_size <= 0)) {
    return UsageError(fmt::format("batch size must be a positive number, not {}", *batch_size));
  }
  Result<std::shared_ptr<const pcre2_code>> code = Compile(pattern);
  if (!code) return code.error();
  if (Status spelling = CheckGroupSpelling(code->get()); !spelling) return spelling.error();

  // Find the known groups; PCRE2 refuses duplicate names unless (?J) allows them, and then we cannot tell
  // which one to read.
  std::vector<int> groups(kGroups.size(), 0);
  bool rate = false, per_step = false;
  for (size_t i = 0; i < kGroups.size(); ++i) {
    const int number = pcre2_substring_number_from_name(code->get(), reinterpret_cast<PCRE2_SPTR>(kGroups[i].name));
    if (number == PCRE2_ERROR_NOUNIQUESUBSTRING) {
      return UsageError(fmt::format("group '{}' appears more than once in '{}'", kGroups[i].name, pattern));
    }
    if (number <= 0) continue;
    groups[i] = number;
    rate |= kGroups[i].meaning == Meaning::kSamplesPerS;
    per_step |= kGroups[i].meaning == Meaning::kItersPerS || kGroups[i].meaning == Meaning::kStepS;
  }

  // Something must turn into samples per second.
  if (!rate && !per_step) {
    std::string message = fmt::format(
        "regular expression '{}' captures none of the groups samples_per_s, it_per_s, step_s, s_per_it, "
        "ms_per_step (write e.g. '(?P<samples_per_s>[0-9.]+) samples/s'), and is not a preset ({})",
        pattern, fmt::join(PresetNames(), ", "));
    if (std::optional<std::string> close = ClosestMatch(spec, PresetNames())) {
      message += fmt::format("; did you mean '{}'?", *close);
    }
    return UsageError(std::move(message));
  }
  if (!rate && !batch_size) {
    return UsageError(
        fmt::format("'{}' reports steps or iterations, not samples: give the batch size (samples per step)", spec));
  }
  std::vector<PhaseGroup> phase_groups;
  for (const std::string& name : NamedGroups(code->get())) {
    if (auto phase = PhaseGroupName(name)) {
      int number = pcre2_substring_number_from_name(code->get(), reinterpret_cast<PCRE2_SPTR>(name.c_str()));
      if (number > 0) phase_groups.push_back({phase->first, number, phase->second});
    }
  }
  return LineParser(std::move(pattern), *std::move(code), std::move(groups), std::move(phase_groups),
                    batch_size);
}

LineParser::LineParser(std::string pattern, std::shared_ptr<const pcre2_code> code, std::vector<int> groups,
                       std::vector<PhaseGroup> phase_groups, std::optional<double> batch_size)
    : pattern_(std::move(pattern)),
      code_(std::move(code)),
      groups_(std::move(groups)),
      phase_groups_(std::move(phase_groups)),
      batch_size_(batch_size) {}

std::optional<ParsedLine> LineParser::Parse(std::string_view line, double t) const {
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr), pcre2_match_data_free);
  if (match == nullptr) return std::nullopt;
  const int matched =
      pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(line.data()), line.size(), 0, 0, match.get(), nullptr);
  if (matched < 0) return std::nullopt;
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());

  // The first rate and the first step time that matched, in the preference order of kGroups.
  std::optional<double> rate, step_s, data_s;
  for (size_t i = 0; i < kGroups.size(); ++i) {
    std::optional<double> v = GroupValue(line, ovector, groups_[i]);
    if (!v) continue;
    *v *= kGroups[i].scale;
    switch (kGroups[i].meaning) {
      case Meaning::kSamplesPerS: rate = rate.value_or(*v); break;
      case Meaning::kItersPerS:
        if (batch_size_) rate = rate.value_or(*v * *batch_size_);
        break;
      case Meaning::kStepS:
        if (*v > 0) step_s = step_s.value_or(*v);
        break;
      case Meaning::kDataS: data_s = data_s.value_or(*v); break;
    }
  }

  ParsedLine parsed;
  if (rate) {
    parsed.observation = {t, 1, *rate};
  } else if (step_s && batch_size_) {
    parsed.observation = {t, *step_s, *batch_size_};
  } else {
    return std::nullopt;
  }
  // The data-wait share needs the step time: given, or implied by the rate and the batch size.
  if (!step_s && rate && batch_size_ && *rate > 0) step_s = *batch_size_ / *rate;
  if (data_s && step_s) parsed.data_wait_share = std::clamp(*data_s / *step_s, 0.0, 1.0);
  for (const PhaseGroup& p : phase_groups_) {
    std::optional<double> v = GroupValue(line, ovector, p.group);
    if (v && step_s) parsed.phase_shares[p.phase] = std::clamp(*v * p.scale / *step_s, 0.0, 1.0);
  }
  return parsed;
}

}  // namespace sat::measure
