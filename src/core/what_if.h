// What other hardware would give, estimated from what one measurement saw (`saturate probe --what-if`,
// `saturate tune --what-if`): the throughput of the same training on another GPU, with more loader workers, or on
// N GPUs of one node, each with the pipe that would be narrowest and its cost per epoch at a given price.
// Estimates, never measurements: every line rests on the assumptions the result lists. Pure functions over what was
// measured (WhatIfInputs: probe fills it from its stages, tune from its ceilings and confirmation) and the peak
// table (peak_flops.h).
//
// The model, per pipe (samples/s):
//   compute  the compute stage's rate x (the target's dense peak / this GPU's, for the precision the step ran in):
//            the same MFU on the other GPU; x N for N GPUs (data parallel, communication not counted);
//   loader   the loader stage's rate with its workers as configured; with more workers, its rate per CPU core it
//            used x the cores left to loading (the node's cores less one per trainer);
//   copy     the host link's bandwidth / the bytes per sample the GPU received over PCIe while training; x N.
// The estimate is the narrowest of them times the share of it the full stage reached here (how well this loop
// overlaps its pipes), at most 1. A run the verdict finds loader- or storage-bound on a machine without a GPU (or
// whose step ran on the CPU) gains nothing from any GPU until the loader or storage is fixed: each target gets
// today's rate and that sentence, not "n/a".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/peak_flops.h"
#include "util/result.h"

namespace sat::core {

// What the model reads, from a probe's stages (probe/what_if.h WhatIfInputsOf) or tune's ceilings and confirmation
// (tune/flops.h TuneWhatIfInputs).
struct WhatIfInputs {
  double full = 0;                         // samples/s in full training here; 0: not measured
  std::optional<double> loader, compute;   // the loader and compute ceilings here
  bool gpu_probed = false;
  std::string gpu_name;                    // as NVML names this GPU
  std::optional<Precision> precision;      // of the step's products (the FLOP count)
  bool on_gpu = false;                     // the counted step ran on the GPU, not on the CPU beside it
  std::optional<double> bytes_per_sample;  // host-to-device while training (PCIe receive / full)
  double loader_cores = 1;                 // cores the loader ceiling used, at least one
  unsigned cores = 0;                      // the machine's
  std::optional<double> epoch_samples;     // for the cost of an epoch
  std::optional<double> price_per_gpu_hour;  // this GPU's
  // "loader" or "storage" when the verdict names one of them: the loader's ceiling bounds any GPU, so a machine
  // without one (or a step that ran on the CPU) still gets an answer; empty otherwise.
  std::string bound_by;
};

struct WhatIfTarget {
  std::string name;                          // as given: "h100", "a100-pcie", "l4"
  int gpus = 1;                              // "4xh100": 4
  std::optional<double> price_per_gpu_hour;  // "a100:1.80"
};

// "h100,a100:1.80,4xh100,l4" -> targets; an error naming the item for an unknown GPU (the table's models are
// listed), a count outside 1..64 or a price that is not a positive number.
Result<std::vector<WhatIfTarget>> ParseWhatIf(std::string_view text);

struct WhatIfLine {
  std::string label;                 // "A100 (x1)", "this GPU, loader on 15 cores"
  std::optional<double> samples_per_s;
  std::string narrowest;             // "compute", "loader", "copy"
  std::optional<double> vs_now;      // samples_per_s / the full stage's
  std::optional<double> per_epoch;   // money, at the target's price per GPU-hour x GPUs, when both are known
  std::string note;                  // why there is no estimate, or what the line means for the user
};

struct WhatIf {
  std::vector<WhatIfLine> lines;
  std::vector<std::string> assumptions;  // what every line rests on, as measured here
  std::string unavailable_why;           // set when no line could be estimated
};

// The lines for `targets` (each GPU, then N GPUs where a count was given), plus "this GPU with more loader
// workers" when the loader is what holds it back here. `price_per_gpu_hour` is this GPU's (--price-per-hour).
WhatIf EstimateWhatIf(const WhatIfInputs& inputs, const std::vector<WhatIfTarget>& targets);

// The report's section: "what-if (estimates ...):" and a line per estimate, then the assumptions; "" when none.
std::string WhatIfText(const WhatIf& w);

}  // namespace sat::core
