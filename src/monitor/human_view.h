// The default view of `saturate monitor` (no --query, no --format): a few compact lines per
// sample, one per GPU, one for the host, one for the watched process tree:
//
//   GPU0 NVIDIA H200  util  82%  mem 5959/143771 MiB  71°C  250/700 W  P0
//   host cpu 37% (iowait 2%) load 1.2  mem 8.1/23.4 GiB  disk r 12.0 w 0.3 MiB/s util 4%  net rx 0.1 tx 0.0 MiB/s
//   tree pid 123: 5 procs 31 thr cpu 180% rss 1.2 GiB read 40.1 write 0.0 MiB/s gpu 2.1 GiB
//   train 2841.3 samples/s 22.20 steps/s data wait 12%
//
// The training line shows once the command reported progress over the helper channel.
// A value that was not reported shows as "n/a". The view only formats: the caller prints the
// lines plainly (a pipe) or redraws them in place (a terminal) with RedrawPrefix.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace sat::monitor {

struct HumanOptions {
  bool gpu_backend = true;        // false: a note line replaces the GPU lines
  std::string no_backend_reason{};  // shown in that note when set, e.g. "libnvidia-ml.so.1 not found"
  size_t width = 0;               // cut lines to this many columns (the terminal's); 0: no limit
};

class HumanView {
 public:
  explicit HumanView(HumanOptions options);

  // The lines for one sample, without newlines.
  std::vector<std::string> Lines(const telemetry::Sample& sample) const;

 private:
  HumanOptions options_;
};

// The ANSI sequence that moves the cursor up over the `previous_lines` lines printed last (each
// ended by a newline) and clears from there to the end of the screen, so the next block
// overwrites the last one. Empty when `previous_lines` is 0. Lines must not have wrapped, which
// HumanOptions::width guarantees.
std::string RedrawPrefix(size_t previous_lines);

}  // namespace sat::monitor
