// Early termination as W&B's `early_terminate: {type: hyperband, ...}` defines it (wandb/sweeps,
// hyperband_stopping.py): a run's "iterations" are the values of the sweep metric it has reported so far, in
// order. At each band (an iteration count), the cut-off is the value ranked int(len / eta) among the values
// every run (running, finished or stopped) had at that iteration; a running run that reached a band is stopped
// when its best value so far (strict: its value at the latest band it reached) is worse than that band's cut-off.
//
// Bands: with max_iter and s, max_iter / eta, max_iter / eta^2, ... (s of them, while at least 1, each
// truncated), ascending; with min_iter, min_iter, min_iter * eta, min_iter * eta^2, ... (W&B takes 100 of them;
// here those up to kMaxBand, which no run reaches).
//
// Pure functions and plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace sat::sweep {

inline constexpr int64_t kMaxBand = int64_t{1} << 40;

// The `early_terminate` section (type hyperband). Exactly one of min_iter / max_iter is set.
struct HyperbandSpec {
  std::optional<int64_t> min_iter, max_iter;
  int64_t s = 0;  // how many bands below max_iter; needed with max_iter
  double eta = 3;
  bool strict = false;
};

// The bands of `h` (the spec parser has checked min_iter / max_iter, s >= 1 with max_iter, and eta > 1).
// Usage error when they come out empty ("try a larger s, a smaller eta or a larger min_iter"), as in W&B.
Result<std::vector<int64_t>> HyperbandBands(const HyperbandSpec& h);

// The cut-off per band over `histories` (each run's metric values in order), +infinity for a band no
// run has reached. Values compare as W&B's do: maximised metrics are negated, so lower is better throughout
// and a cut-off is in those terms.
std::vector<double> HyperbandThresholds(const std::vector<int64_t>& bands, double eta,
                                        const std::vector<std::vector<double>>& histories, bool maximize);

struct HyperbandCut {
  int64_t band = 0;      // the latest band the run has reached
  double value = 0;      // what was compared, in the metric's own terms
  double threshold = 0;  // the band's cut-off, in the metric's own terms
  bool stop = false;
};

// The verdict on one running run with `history`; nullopt before it reaches the first band.
std::optional<HyperbandCut> HyperbandJudge(const std::vector<int64_t>& bands, const std::vector<double>& thresholds,
                                           const std::vector<double>& history, bool maximize, bool strict);

}  // namespace sat::sweep
