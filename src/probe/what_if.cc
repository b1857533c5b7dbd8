#include "probe/what_if.h"

#include <algorithm>

#include "core/energy.h"
#include "core/mfu.h"
#include "core/stage_costs.h"
#include "probe/verdict.h"

namespace sat::probe {
namespace {

std::optional<double> Rate(const core::StageResult& s) {
  if (!core::StageMeasured(s) || !EnoughSteadyData(s)) return std::nullopt;
  return s.estimate.samples_per_s;
}

}  // namespace

core::WhatIfInputs WhatIfInputsOf(const ProbeResult& r) {
  core::WhatIfInputs m;
  m.full = Rate(r.full).value_or(0);
  m.loader = Rate(r.loader);
  m.compute = Rate(r.compute);
  m.cores = r.machine.cpu_count;
  m.gpu_probed = r.machine.gpu_index >= 0;
  m.gpu_name = r.machine.gpu_name;
  core::FlopsReading flops = StageFlops(r, r.compute.ran ? r.compute : r.full);
  m.precision = flops.precision;
  m.on_gpu = flops.count && flops.count->device != "cpu";
  if (std::optional<double> rx = core::MeanOf(r.full.telemetry.gpu_pcie_rx_bytes_per_s); rx && m.full > 0) {
    m.bytes_per_sample = *rx / m.full;
  }
  if (std::optional<double> cpu = core::MeanOf(r.loader.telemetry.tree_cpu_pct)) m.loader_cores = std::max(1.0, *cpu / 100);
  if (std::optional<core::Cost> c = core::CostOf(r.full, 1.0)) m.epoch_samples = c->epoch_samples;
  m.price_per_gpu_hour = r.price_per_gpu_hour;
  if (r.verdict.bottleneck == "loader" || r.verdict.bottleneck == "storage") m.bound_by = r.verdict.bottleneck;
  return m;
}

core::WhatIf EstimateWhatIf(const ProbeResult& r, const std::vector<core::WhatIfTarget>& targets) {
  return core::EstimateWhatIf(WhatIfInputsOf(r), targets);
}

}  // namespace sat::probe
