#include "monitor/sample_json.h"

#include "monitor/fields.h"

namespace sat::telemetry {
namespace {

template <class T>
nlohmann::json OrNull(const Opt<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Empty strings mean "unknown" in GpuSample.
nlohmann::json TextOrNull(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

}  // namespace

void to_json(nlohmann::json& j, const GpuProcess& p) {
  j = {{"pid", static_cast<long long>(p.pid)}, {"used_memory_bytes", OrNull(p.used_memory_bytes)}};
}

void to_json(nlohmann::json& j, const GpuSample& g) {
  j = {
      {"index", g.index},
      {"name", TextOrNull(g.name)},
      {"uuid", TextOrNull(g.uuid)},
      {"pci_bus_id", TextOrNull(g.pci_bus_id)},
      {"driver_version", TextOrNull(g.driver_version)},
      {"util_gpu_pct", OrNull(g.util_gpu_pct)},
      {"util_memory_pct", OrNull(g.util_memory_pct)},
      {"memory_total_bytes", OrNull(g.memory_total_bytes)},
      {"memory_used_bytes", OrNull(g.memory_used_bytes)},
      {"memory_free_bytes", OrNull(g.memory_free_bytes)},
      {"temperature_c", OrNull(g.temperature_c)},
      {"power_draw_w", OrNull(g.power_draw_w)},
      {"power_limit_w", OrNull(g.power_limit_w)},
      {"clock_sm_mhz", OrNull(g.clock_sm_mhz)},
      {"clock_memory_mhz", OrNull(g.clock_memory_mhz)},
      {"pcie_link_gen", OrNull(g.pcie_link_gen)},
      {"pcie_link_width", OrNull(g.pcie_link_width)},
      {"pcie_tx_bytes_per_s", OrNull(g.pcie_tx_bytes_per_s)},
      {"pcie_rx_bytes_per_s", OrNull(g.pcie_rx_bytes_per_s)},
      {"pstate", OrNull(g.pstate)},
      {"fan_pct", OrNull(g.fan_pct)},
      {"gpm_sm_active_pct", OrNull(g.gpm_sm_active_pct)},
      {"gpm_sm_occupancy_pct", OrNull(g.gpm_sm_occupancy_pct)},
      {"gpm_tensor_active_pct", OrNull(g.gpm_tensor_active_pct)},
      {"gpm_dram_bw_util_pct", OrNull(g.gpm_dram_bw_util_pct)},
      {"processes", g.processes},
  };
}

void to_json(nlohmann::json& j, const DiskRates& d) {
  j = {{"name", d.name},
       {"read_bytes_per_s", d.read_bytes_per_s},
       {"write_bytes_per_s", d.write_bytes_per_s},
       {"read_iops", d.read_iops},
       {"write_iops", d.write_iops},
       {"busy_pct", d.busy_pct}};
}

void to_json(nlohmann::json& j, const NetRates& n) {
  j = {{"name", n.name}, {"rx_bytes_per_s", n.rx_bytes_per_s}, {"tx_bytes_per_s", n.tx_bytes_per_s}};
}

void to_json(nlohmann::json& j, const HostSample& h) {
  nlohmann::json cores = nlohmann::json::array();
  for (const Opt<double>& c : h.core_util_pct) cores.push_back(OrNull(c));
  j = {
      {"cpu_util_pct", OrNull(h.cpu_util_pct)},
      {"core_util_pct", cores},
      {"cpu_iowait_pct", OrNull(h.cpu_iowait_pct)},
      {"cpu_count", h.cpu_count},
      {"load1", OrNull(h.load1)},
      {"load5", OrNull(h.load5)},
      {"load15", OrNull(h.load15)},
      {"mem_total_bytes", OrNull(h.mem_total_bytes)},
      {"mem_used_bytes", OrNull(h.mem_used_bytes)},
      {"mem_available_bytes", OrNull(h.mem_available_bytes)},
      {"swap_total_bytes", OrNull(h.swap_total_bytes)},
      {"swap_used_bytes", OrNull(h.swap_used_bytes)},
      {"disks", h.disks},
      {"nets", h.nets},
      {"disk_read_bytes_per_s", OrNull(h.disk_read_bytes_per_s)},
      {"disk_write_bytes_per_s", OrNull(h.disk_write_bytes_per_s)},
      {"disk_read_iops", OrNull(h.disk_read_iops)},
      {"disk_write_iops", OrNull(h.disk_write_iops)},
      {"disk_busy_pct", OrNull(h.disk_busy_pct)},
      {"net_rx_bytes_per_s", OrNull(h.net_rx_bytes_per_s)},
      {"net_tx_bytes_per_s", OrNull(h.net_tx_bytes_per_s)},
      {"cpu_energy_j", OrNull(h.cpu_energy_j)},
  };
}

void to_json(nlohmann::json& j, const ProcTreeSample& t) {
  nlohmann::json pids = nlohmann::json::array();
  for (pid_t pid : t.pids) pids.push_back(static_cast<long long>(pid));
  j = {
      {"root", static_cast<long long>(t.root)},
      {"alive", t.alive},
      {"pids", pids},
      {"process_count", t.process_count},
      {"thread_count", t.thread_count},
      {"cpu_pct", OrNull(t.cpu_pct)},
      {"rss_bytes", OrNull(t.rss_bytes)},
      {"read_bytes_per_s", OrNull(t.read_bytes_per_s)},
      {"write_bytes_per_s", OrNull(t.write_bytes_per_s)},
      {"gpu_memory_bytes", OrNull(t.gpu_memory_bytes)},
      {"samples_per_s", OrNull(t.samples_per_s)},
      {"steps_per_s", OrNull(t.steps_per_s)},
      {"data_wait_share", OrNull(t.data_wait_share)},
  };
}

void to_json(nlohmann::json& j, const Sample& s) {
  j = {
      {"timestamp", monitor::NvidiaTimestamp(s.time_s)},
      {"time_s", s.time_s},
      {"mono_s", s.mono_s},
      {"host", s.host},
      {"gpus", s.gpus},
      {"tree", OrNull(s.tree)},
  };
}

}  // namespace sat::telemetry
