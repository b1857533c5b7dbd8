#include "slurm/right_size.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

template <class T>
void KeepLarger(std::optional<T>& mine, const std::optional<T>& theirs) {
  if (theirs && (!mine || *theirs > *mine)) mine = theirs;
}

template <class T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void ShapeUsage::Merge(const ShapeUsage& other) {
  KeepLarger(cpu_pct, other.cpu_pct);
  KeepLarger(rss_bytes, other.rss_bytes);
  KeepLarger(gpu_mem_bytes, other.gpu_mem_bytes);
  KeepLarger(gpu_total_bytes, other.gpu_total_bytes);
  KeepLarger(gpu_util_pct, other.gpu_util_pct);
}

std::string SlurmRequest::Gres() const {
  if (gpus > 0) return fmt::format("gpu:{}", gpus);
  if (shards > 0) return fmt::format("shard:{}", shards);
  if (mps > 0) return fmt::format("mps:{}", mps);
  return "";
}

std::vector<std::string> SlurmRequest::SbatchOptions() const {
  std::vector<std::string> out;
  if (const std::string gres = Gres(); !gres.empty()) out.push_back("--gres=" + gres);
  if (cpus) out.push_back(fmt::format("--cpus-per-task={}", *cpus));
  if (mem_mib) out.push_back(fmt::format("--mem={}M", *mem_mib));
  return out;
}

nlohmann::json SlurmRequest::ToJson() const {
  return {{"gres", Gres()},         {"gpus", gpus},           {"shards", shards},
          {"mps", mps},             {"cpus", OrNull(cpus)},   {"mem_mib", OrNull(mem_mib)},
          {"sized", sized},         {"oom_bumps", oom_bumps}, {"gpu_fraction", gpu_fraction}};
}

SlurmRequest SlurmRequest::FromJson(const nlohmann::json& j) {
  SlurmRequest r;
  if (!j.is_object()) return r;
  r.gpus = j.value("gpus", 0);
  r.shards = j.value("shards", 0);
  r.mps = j.value("mps", 0);
  if (j.contains("cpus") && j["cpus"].is_number_integer()) r.cpus = j["cpus"].get<int>();
  if (j.contains("mem_mib") && j["mem_mib"].is_number_integer()) r.mem_mib = j["mem_mib"].get<uint64_t>();
  r.sized = j.value("sized", false);
  r.oom_bumps = j.value("oom_bumps", 0);
  r.gpu_fraction = j.value("gpu_fraction", 0.0);
  return r;
}

Result<GpuShare> ResolveShare(GpuShare wanted, const PartitionGres& gres, const std::string& partition) {
  const std::string where = partition.empty() ? "the default partition" : fmt::format("partition '{}'", partition);
  const std::string has = fmt::format("its nodes have gpu:{}, shard:{}, mps:{}", gres.gpus_per_node,
                                      gres.shards_per_node, gres.mps_per_node);
  switch (wanted) {
    case GpuShare::kAuto:
      if (gres.shards_per_gpu() > 0) return GpuShare::kShard;
      if (gres.mps_per_gpu() > 0) return GpuShare::kMps;
      return GpuShare::kGpu;
    case GpuShare::kShard:
      if (gres.shards_per_gpu() > 0) return wanted;
      return UsageError(fmt::format("saturate.slurm.share is shard, but {} defines no shard GRES ({})", where, has));
    case GpuShare::kMps:
      if (gres.mps_per_gpu() > 0) return wanted;
      return UsageError(fmt::format("saturate.slurm.share is mps, but {} defines no mps GRES ({})", where, has));
    case GpuShare::kGpu:
      return wanted;
  }
  return wanted;
}

SlurmRequest DefaultRequest(const SlurmSpec& spec, const PartitionGres& gres, int oom_bumps) {
  SlurmRequest r;
  r.gpus = spec.gpus.value_or(gres.gpus_per_node > 0 ? 1 : 0);
  r.gpu_fraction = r.gpus;
  r.cpus = spec.cpus;
  if (spec.mem_bytes) {
    const double mib = static_cast<double>(*spec.mem_bytes) / (1 << 20) * std::pow(2.0, oom_bumps);
    r.mem_mib = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(mib)));
  }
  r.oom_bumps = oom_bumps;
  return r;
}

SlurmRequest SizedRequest(const SlurmSpec& spec, const PartitionGres& gres, GpuShare share, const ShapeUsage& usage,
                          int oom_bumps) {
  SlurmRequest r = DefaultRequest(spec, gres, 0);
  r.sized = true;
  r.oom_bumps = oom_bumps;
  const double grow = 1 + spec.margin;
  const double bump = std::pow(2.0, oom_bumps);
  if (usage.cpu_pct) {
    int cpus = std::max(1, static_cast<int>(std::ceil(*usage.cpu_pct / 100 * grow - 1e-9)));
    if (gres.cpus_per_node > 0) cpus = std::min(cpus, gres.cpus_per_node);
    r.cpus = cpus;
  }
  if (usage.rss_bytes) {
    const double mib = static_cast<double>(*usage.rss_bytes) * grow * bump / (1 << 20);
    r.mem_mib = std::max(kMinMemMib, static_cast<uint64_t>(std::ceil(mib)));
  }
  // Part of a GPU only for a single-GPU run whose GPU memory and GPU size were both seen.
  if (r.gpus == 1 && usage.gpu_mem_bytes && usage.gpu_total_bytes && *usage.gpu_total_bytes > 0 &&
      share != GpuShare::kGpu && share != GpuShare::kAuto) {
    const double fraction =
        std::max(static_cast<double>(*usage.gpu_mem_bytes) * grow * bump / static_cast<double>(*usage.gpu_total_bytes),
                 usage.gpu_util_pct.value_or(0) / 100);
    const int per_gpu = share == GpuShare::kShard ? gres.shards_per_gpu() : gres.mps_per_gpu();
    if (per_gpu > 0) {
      const int units = std::max(1, static_cast<int>(std::ceil(fraction * per_gpu - 1e-9)));
      if (units < per_gpu) {
        r.gpus = 0;
        (share == GpuShare::kShard ? r.shards : r.mps) = units;
        r.gpu_fraction = static_cast<double>(units) / per_gpu;
      }
    }
  }
  return r;
}

}  // namespace sat::slurm
