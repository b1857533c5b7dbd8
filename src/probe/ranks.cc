#include "probe/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/stage.h"
#include "util/strings.h"

namespace sat::probe {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median of `get` over every row but `skip`.
template <class Get>
double OthersMedian(const std::vector<RankRow>& rows, size_t skip, Get get) {
  std::vector<double> values;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i != skip) values.push_back(get(rows[i]));
  }
  return Median(values);
}

std::string Ms(double ms) { return FormatNumber(ms) + " ms"; }

}  // namespace

std::vector<RankRow> RankRows(const core::StageResult& stage) {
  std::vector<RankRow> rows;
  for (const measure::ProcessTotals& p : stage.totals.per_process) {
    if (!p.rank || p.steps <= 0) continue;
    RankRow row;
    row.rank = *p.rank;
    row.pid = p.pid;
    row.steps = p.steps;
    row.samples_per_s = p.samples_per_s;
    const double loop = p.wait_s + p.step_s;
    row.wait_share = loop > 0 ? p.wait_s / loop : 0;
    row.step_ms = 1000 * loop / static_cast<double>(p.steps);
    row.own_ms = 1000 * (p.wait_s + p.after_step_s) / static_cast<double>(p.steps);
    if (p.before_backward_s) row.to_backward_ms = 1000 * *p.before_backward_s / static_cast<double>(p.steps);
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });
  if (rows.size() < 2) rows.clear();
  return rows;
}

std::optional<Straggler> FindStraggler(const core::StageResult& stage) {
  std::vector<RankRow> rows;
  for (const RankRow& row : RankRows(stage)) {
    if (row.steps >= kMinStragglerSteps) rows.push_back(row);
  }
  if (rows.size() < 2) return std::nullopt;
  std::vector<double> steps;
  for (const RankRow& r : rows) steps.push_back(r.step_ms);
  const double step = Median(steps);
  if (!(step > 0)) return std::nullopt;

  // Ranks that do not wait for each other: the slowest rate.
  std::optional<Straggler> best;
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankRow& r = rows[i];
    double others = OthersMedian(rows, i, [](const RankRow& x) { return x.samples_per_s; });
    if (!(others > 0) || !(r.samples_per_s > 0)) continue;
    double excess = 1 - r.samples_per_s / others;
    if (excess >= kStragglerShare && (!best || excess > best->excess_share)) {
      bool data = r.wait_share >= 0.3;
      best = Straggler{r.rank, fmt::format("rank {}'s {}", r.rank, data ? "data loading" : "steps"),
                       fmt::format("rank {} at {} against {} on the others (median); its data wait {}",
                                   r.rank, FormatRate(r.samples_per_s), FormatRate(others), FormatShare(r.wait_share)),
                       data ? fmt::format("speed up rank {}'s loader (more workers, a local copy of its data)", r.rank)
                            : fmt::format("find what slows rank {} down: another process on its device or cores "
                                          "(saturate monitor), or a larger share of the work",
                                          r.rank),
                       excess};
    }
  }
  if (best) return best;

  // Lock step: the rank whose own time before meeting the others is longest. Its data wait and after-step work
  // first: when one rank arrives late at forward, the others' forward holds the wait (DDP's buffer broadcast), so
  // their time to backward grows, not its.
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankRow& r = rows[i];
    double others = OthersMedian(rows, i, [](const RankRow& x) { return x.own_ms; });
    double excess = (r.own_ms - others) / step;
    if (excess >= kStragglerShare && (!best || excess > best->excess_share)) {
      best = Straggler{
          r.rank, fmt::format("rank {}'s data loading", r.rank),
          fmt::format("rank {} waits {} per step for data and after-step work against {} on the others (median), "
                      "in a step of {}: the others wait {} of each step for it",
                      r.rank, Ms(r.own_ms), Ms(others), Ms(step), FormatShare(excess)),
          fmt::format("speed up rank {}'s loader (more workers, a local copy of its data, an even share of the "
                      "dataset per rank)",
                      r.rank),
          excess};
    }
  }
  if (best) return best;
  const bool timed = std::all_of(rows.begin(), rows.end(), [](const RankRow& r) { return r.to_backward_ms; });
  if (!timed) return std::nullopt;
  auto forward = [](const RankRow& x) { return *x.to_backward_ms - x.own_ms; };
  for (size_t i = 0; i < rows.size(); ++i) {
    const RankRow& r = rows[i];
    double others = OthersMedian(rows, i, forward);
    double excess = (forward(r) - others) / step;
    if (excess >= kStragglerShare && (!best || excess > best->excess_share)) {
      best = Straggler{
          r.rank, fmt::format("rank {}'s forward pass", r.rank),
          fmt::format("rank {} reaches backward() {} after its batch against {} on the others (median), in a step "
                      "of {}: the others wait {} of each step for it",
                      r.rank, Ms(forward(r)), Ms(others), Ms(step), FormatShare(excess)),
          fmt::format("find what slows rank {}'s device down: another process on it or on its CPU cores (saturate "
                      "monitor), a lower clock, or larger inputs on that rank",
                      r.rank),
          excess};
    }
  }
  return best;
}

std::optional<BatchLayout> BatchLayoutOf(const core::StageResult& stage) {
  std::vector<const measure::LoaderInfo*> loaders;
  for (const auto& [rank, loader] : stage.rank_loaders) loaders.push_back(&loader);
  if (loaders.empty() && stage.loader) loaders.push_back(&*stage.loader);
  BatchLayout out;
  out.world_size = std::max<int64_t>(stage.world_size, static_cast<int64_t>(stage.rank_loaders.size()));
  out.drop_last = !loaders.empty();
  int64_t sum = 0;
  for (const measure::LoaderInfo* l : loaders) {
    if (!l->batch_size) return std::nullopt;
    out.per_device = out.per_device == 0 ? *l->batch_size : std::min(out.per_device, *l->batch_size);
    sum += *l->batch_size;
    if (l->last_batch && (!out.last_batch || *l->last_batch < *out.last_batch)) out.last_batch = l->last_batch;
    out.batchnorm = out.batchnorm || l->batchnorm == true;
    out.drop_last = out.drop_last && l->drop_last == true;
  }
  if (loaders.empty()) return std::nullopt;
  // A rank whose loader message was lost still holds a device: count it at the per-device batch.
  out.global = static_cast<int64_t>(loaders.size()) == out.world_size ? sum : out.per_device * out.world_size;
  return out;
}

std::vector<std::string> BatchNotes(const core::StageResult& stage) {
  std::vector<std::string> notes;
  std::optional<BatchLayout> b = BatchLayoutOf(stage);
  if (!b) return notes;
  if (b->world_size > 1 && b->per_device < kMinBatchPerDevice) {
    notes.push_back(fmt::format(
        "a batch of {} per device is under {}: each device gets too little work per step to use it well, and "
        "BatchNorm statistics over so few samples are noisy; keep at least {} per device (global batch {})",
        b->per_device, kMinBatchPerDevice, kMinBatchPerDevice, b->global));
  }
  if (b->last_batch && b->batchnorm && !b->drop_last) {
    notes.push_back(fmt::format(
        "each epoch ends with a batch of {} instead of {}{}, and the model has BatchNorm layers: their statistics "
        "from that small batch are skewed; pass drop_last=True to the training DataLoader",
        *b->last_batch, b->per_device, b->world_size > 1 ? " per device" : ""));
  }
  return notes;
}

std::string BatchText(const BatchLayout& b) {
  if (b.world_size <= 1) return std::to_string(b.per_device);
  return fmt::format("{} per device x {} ranks = {} global", b.per_device, b.world_size, b.global);
}

}  // namespace sat::probe
