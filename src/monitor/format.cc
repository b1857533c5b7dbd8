#include "monitor/format.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "util/strings.h"

namespace sat::monitor {

Result<Format> ParseFormat(std::string_view spec) {
  static const std::vector<std::string> kOptions = {"csv", "json", "noheader", "nounits"};
  if (Trim(spec).empty()) return UsageError("empty --format; use csv[,noheader][,nounits] or json");

  Format format;
  bool csv = false, json = false;
  for (const std::string& raw : Split(spec, ',')) {
    std::string option(Trim(raw));
    if (option == "csv") {
      csv = true;
    } else if (option == "json") {
      json = true;
    } else if (option == "noheader") {
      format.header = false;
    } else if (option == "nounits") {
      format.units = false;
    } else {
      std::string message = fmt::format("unknown --format option '{}'", option);
      if (auto best = ClosestMatch(option, kOptions)) message += fmt::format("; did you mean '{}'?", *best);
      return UsageError(message);
    }
  }

  if (csv && json) return UsageError("--format takes csv or json, not both");
  if (!csv && !json) return UsageError(fmt::format("--format={} names no output; add csv or json", spec));
  if (json && (!format.header || !format.units)) {
    return UsageError("noheader and nounits apply to --format=csv only");
  }
  format.kind = csv ? OutputKind::kCsv : OutputKind::kJson;
  return format;
}

}  // namespace sat::monitor
