// The ranks of a distributed job as one stage saw them: each rank's throughput and where its step time went, the
// rank the others wait for (a straggler), and the batch rules of multi-device training (field guide 003).
//
// Inputs come from the helper: every rank reports its own counters (measure::ProcessTotals, keyed by the `rank`
// field of its progress reports) and its training loader (StageResult::rank_loaders). Pure functions, no I/O.
//
// Why a straggler needs more than throughput: DDP keeps ranks in lock step (the gradient all-reduce in backward,
// the buffer broadcast at the start of forward), so every rank reports the same samples/s and the fast ones spend
// the difference waiting inside the collective. What differs is the time a rank spends on its own before it meets
// the others: its data wait and after-step work (from a step's end to its batch), and its time to reach backward()
// (that plus the forward pass). A rank whose own time per step exceeds the others' median by kStragglerShare of
// the step is the one they wait for. Ranks that do not wait for each other show it in their samples/s directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/stage.h"

namespace sat::probe {


inline constexpr double kStragglerShare = 0.1;  // a rank >= 10% of a step slower than the others' median
inline constexpr int64_t kMinStragglerSteps = 3;  // steps a rank must have reported to be compared
inline constexpr int64_t kMinBatchPerDevice = 16;  // field guide 003: at least 16 samples per GPU

struct RankRow {
  int64_t rank = 0;
  int64_t pid = 0;
  int64_t steps = 0;
  double samples_per_s = 0;
  double wait_share = 0;        // of its loop time
  double step_ms = 0;           // loop time (data wait + step) per step
  double own_ms = 0;            // data wait + after-step work per step
  std::optional<double> to_backward_ms;  // from a step's start to its last backward() (automatic only)
};

// One row per rank that reported steps, by rank; empty unless at least two ranks did.
std::vector<RankRow> RankRows(const core::StageResult& stage);

struct Straggler {
  int64_t rank = 0;
  std::string cause;     // "rank 1's data loading", "rank 1's forward pass", "rank 1's steps"
  std::string evidence;  // the numbers
  std::string next;      // what to change on that rank
  double excess_share = 0;  // how much of a step the others wait for it
};

// The rank the others wait for, when one is at least kStragglerShare of a step slower; nullopt otherwise.
std::optional<Straggler> FindStraggler(const core::StageResult& stage);

// The batch as the devices see it: per device (each rank's training loader), global (their sum), and the last
// batch of an epoch when it is smaller. Absent when no loader reported a batch size.
struct BatchLayout {
  int64_t world_size = 1;
  int64_t per_device = 0;  // the smallest rank's batch size
  int64_t global = 0;      // the sum over ranks
  std::optional<int64_t> last_batch;  // the smallest partial last batch of any rank; absent with drop_last
  bool batchnorm = false;
  bool drop_last = false;
};
std::optional<BatchLayout> BatchLayoutOf(const core::StageResult& stage);

// Warnings from field guide 003: fewer than kMinBatchPerDevice samples per device in a multi-device job; an
// epoch's last batch smaller than the rest while the model has BatchNorm layers and the loader keeps it.
std::vector<std::string> BatchNotes(const core::StageResult& stage);

// "32 per device x 2 ranks = 64 global", or "32" for one process; empty without a layout.
std::string BatchText(const BatchLayout& layout);

}  // namespace sat::probe
