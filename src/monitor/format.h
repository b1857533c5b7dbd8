// The --format option of `saturate monitor`: nvidia-smi's `csv[,noheader][,nounits]`, or `json`.
#pragma once

#include <string_view>

#include "util/result.h"

namespace sat::monitor {

enum class OutputKind {
  kHuman,  // the default without --format: a compact view for people
  kCsv,    // nvidia-smi's CSV
  kJson,   // JSON lines: one object per row (or per sample when nothing is queried)
};

struct Format {
  OutputKind kind = OutputKind::kHuman;
  bool header = true;  // csv: print the header line (cleared by `noheader`)
  bool units = true;   // csv: units after values (cleared by `nounits`; the header keeps them)
};

// Parses the comma-separated options, in any order as nvidia-smi accepts them
// ("noheader,csv" is fine). Exactly one of csv and json is required; noheader and nounits go
// with csv only. Anything else is a usage error with a suggestion.
Result<Format> ParseFormat(std::string_view spec);

}  // namespace sat::monitor
