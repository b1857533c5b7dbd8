// What the recommended configuration asks of the machine: the CPU cores and RAM to pair with each GPU (the
// guides' "marry the right CPU and RAM to the GPU"), from the measured process tree. Pure functions.
#pragma once

#include <optional>
#include <string>

#include "tune/search.h"

namespace sat::tune {

struct Needs {
  std::optional<int> trial;          // the full-training trial it was read from
  std::optional<int> cpu_cores;      // the tree's p95 CPU use, rounded up to whole cores
  std::optional<double> ram_bytes;   // the tree's resident peak plus 25%, rounded up to 0.5 GiB
  std::optional<double> cpu_pct_p95, rss_peak_bytes;  // as measured (100 = one core)
  bool loader_bound = false;         // the loader stays below the compute ceiling with the chosen workers
};

// Reads the confirmation trial, else the best full-training trial with the recommended settings.
Needs NeedsOf(const SearchOutcome& search);

// "Per GPU, this configuration needs 2 CPU cores (1.7 busy at p95) and 3.0 GiB of RAM (2.3 GiB peak + 25%)."
// Empty when nothing was measured.
std::string NeedsSentence(const Needs& needs, bool gpu);

}  // namespace sat::tune
