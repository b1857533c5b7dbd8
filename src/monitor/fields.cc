#include "monitor/fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <utility>

namespace sat::monitor {
namespace {

using telemetry::GpuSample;
using telemetry::HostSample;
using telemetry::Opt;
using telemetry::ProcTreeSample;
using telemetry::Sample;

constexpr double kMiB = 1024.0 * 1024.0;

template <class T>
Cell Num(const Opt<T>& v, int decimals) {
  if (!v) return {};
  return Number{static_cast<double>(*v), decimals};
}

// Whole MiB, rounded down as nvidia-smi does.
Cell MiB(const Opt<uint64_t>& bytes) {
  if (!bytes) return {};
  return Number{static_cast<double>(*bytes / (1024 * 1024)), 0};
}

Cell MiBPerS(const Opt<double>& bytes_per_s) {
  if (!bytes_per_s) return {};
  return Number{*bytes_per_s / kMiB, 2};
}

Cell Text(const std::string& s) {
  if (s.empty()) return {};
  return s;
}

using Names = std::vector<std::string_view>;

Field SampleField(Names names, std::string_view help, Cell (*read)(const Sample&)) {
  Field f{.names = std::move(names), .scope = Scope::kSample, .unit = "", .help = help};
  f.sample = read;
  return f;
}

Field GpuField(Names names, std::string_view unit, std::string_view help, Cell (*read)(const GpuSample&)) {
  Field f{.names = std::move(names), .scope = Scope::kGpu, .unit = unit, .help = help};
  f.gpu = read;
  return f;
}

Field HostField(Names names, std::string_view unit, std::string_view help, Cell (*read)(const HostSample&)) {
  Field f{.names = std::move(names), .scope = Scope::kHost, .unit = unit, .help = help};
  f.host = read;
  return f;
}

Field TreeField(Names names, std::string_view unit, std::string_view help, Cell (*read)(const ProcTreeSample&)) {
  Field f{.names = std::move(names), .scope = Scope::kProc, .unit = unit, .help = help};
  f.tree = read;
  return f;
}

std::vector<Field> BuildTable() {
  return {
      SampleField({"timestamp"}, "When the sample was taken, \"YYYY/MM/DD HH:MM:SS.msec\" in local time.",
                  [](const Sample& s) -> Cell { return NvidiaTimestamp(s.time_s); }),

      // GPU fields, with nvidia-smi's names and aliases.
      GpuField({"index"}, "", "Zero based index of the GPU.",
               [](const GpuSample& g) -> Cell { return Number{static_cast<double>(g.index), 0}; }),
      GpuField({"name", "gpu_name"}, "", "The official product name of the GPU.",
               [](const GpuSample& g) { return Text(g.name); }),
      GpuField({"uuid", "gpu_uuid"}, "", "The globally unique identifier of the GPU.",
               [](const GpuSample& g) { return Text(g.uuid); }),
      GpuField({"pci.bus_id", "gpu_bus_id"}, "", "PCI bus id as \"domain:bus:device.function\", in hex.",
               [](const GpuSample& g) { return Text(g.pci_bus_id); }),
      GpuField({"driver_version"}, "", "The version of the installed NVIDIA driver.",
               [](const GpuSample& g) { return Text(g.driver_version); }),
      GpuField({"utilization.gpu"}, "%", "Percent of the last sample period during which a kernel was executing.",
               [](const GpuSample& g) { return Num(g.util_gpu_pct, 0); }),
      GpuField({"utilization.memory"}, "%",
               "Percent of the last sample period during which device memory was read or written.",
               [](const GpuSample& g) { return Num(g.util_memory_pct, 0); }),
      GpuField({"memory.total"}, "MiB", "Total GPU memory.",
               [](const GpuSample& g) { return MiB(g.memory_total_bytes); }),
      GpuField({"memory.used"}, "MiB", "GPU memory allocated by active contexts.",
               [](const GpuSample& g) { return MiB(g.memory_used_bytes); }),
      GpuField({"memory.free"}, "MiB", "Free GPU memory.", [](const GpuSample& g) { return MiB(g.memory_free_bytes); }),
      GpuField({"temperature.gpu"}, "", "Core GPU temperature in degrees C (no unit, as in nvidia-smi).",
               [](const GpuSample& g) { return Num(g.temperature_c, 0); }),
      GpuField({"power.draw"}, "W", "Last measured power draw of the board.",
               [](const GpuSample& g) { return Num(g.power_draw_w, 2); }),
      // GpuSample carries one limit; both nvidia-smi names report it.
      GpuField({"power.limit", "gpu.power.requested_limit"}, "W",
               "The power limit in force (saturate reads one limit; same as enforced.power.limit).",
               [](const GpuSample& g) { return Num(g.power_limit_w, 2); }),
      GpuField({"enforced.power.limit", "gpu.power.current_limit"}, "W",
               "The power ceiling the power management algorithm enforces.",
               [](const GpuSample& g) { return Num(g.power_limit_w, 2); }),
      // NVML's name (nvmlDeviceGetTotalEnergyConsumption; nvidia-smi -q prints it as "Total Energy Consumption"),
      // in joules: a counter since the driver loaded, so a difference of two rows is the energy between them.
      GpuField({"total_energy_consumption"}, "J", "Energy the board used since the driver was loaded (a counter).",
               [](const GpuSample& g) { return Num(g.energy_j, 3); }),
      GpuField({"clocks.current.sm", "clocks.sm"}, "MHz", "Current frequency of the SM clock.",
               [](const GpuSample& g) { return Num(g.clock_sm_mhz, 0); }),
      GpuField({"clocks.current.memory", "clocks.mem"}, "MHz", "Current frequency of the memory clock.",
               [](const GpuSample& g) { return Num(g.clock_memory_mhz, 0); }),
      GpuField({"pcie.link.gen.current", "pcie.link.gen.gpucurrent"}, "", "The current PCIe link generation.",
               [](const GpuSample& g) { return Num(g.pcie_link_gen, 0); }),
      GpuField({"pcie.link.width.current"}, "", "The current PCIe link width.",
               [](const GpuSample& g) { return Num(g.pcie_link_width, 0); }),
      GpuField({"pstate"}, "", "The current performance state, P0 (fastest) to P15.",
               [](const GpuSample& g) -> Cell {
                 if (!g.pstate) return {};
                 return fmt::format("P{}", *g.pstate);
               }),
      GpuField({"fan.speed"}, "%", "Intended fan speed in percent of the maximum; N/A on passively cooled boards.",
               [](const GpuSample& g) { return Num(g.fan_pct, 0); }),
      // saturate extensions.
      GpuField({"pcie.tx.throughput"}, "MiB/s", "PCIe traffic from the GPU to the host (saturate extension).",
               [](const GpuSample& g) { return MiBPerS(g.pcie_tx_bytes_per_s); }),
      GpuField({"pcie.rx.throughput"}, "MiB/s", "PCIe traffic from the host to the GPU (saturate extension).",
               [](const GpuSample& g) { return MiBPerS(g.pcie_rx_bytes_per_s); }),
      // NVML's GPM metrics (Hopper and later; N/A before, and in the first sample): averages over the interval
      // since the previous sample. nvidia-smi has no --query-gpu names for them (its dmon --gpm-metrics heads
      // columns smutil, smocc, dram), so these follow its dotted style under "gpm.".
      GpuField({"gpm.sm_active"}, "%",
               "Share of SMs with at least one warp assigned (NVML GPM SM_UTIL; DCGM's SM_ACTIVE); Hopper and later.",
               [](const GpuSample& g) { return Num(g.gpm_sm_active_pct, 1); }),
      GpuField({"gpm.sm_occupancy"}, "%",
               "Warps resident on the SMs, of the most they can hold (NVML GPM SM_OCCUPANCY); Hopper and later.",
               [](const GpuSample& g) { return Num(g.gpm_sm_occupancy_pct, 1); }),
      GpuField({"gpm.tensor_active"}, "%",
               "Share of time the SMs ran tensor-core work of any type (NVML GPM ANY_TENSOR_UTIL); Hopper and later.",
               [](const GpuSample& g) { return Num(g.gpm_tensor_active_pct, 1); }),
      GpuField({"gpm.dram_bw_util"}, "%",
               "DRAM bandwidth used, of the peak (NVML GPM DRAM_BW_UTIL; DCGM's DRAM_ACTIVE); Hopper and later.",
               [](const GpuSample& g) { return Num(g.gpm_dram_bw_util_pct, 1); }),

      HostField({"cpu.util"}, "%", "CPU busy time over all cores; 100 means every core busy.",
                [](const HostSample& h) { return Num(h.cpu_util_pct, 1); }),
      HostField({"cpu.iowait"}, "%", "CPU time idle while waiting for I/O, over all cores.",
                [](const HostSample& h) { return Num(h.cpu_iowait_pct, 1); }),
      HostField({"cpu.count"}, "", "Number of online CPUs.",
                [](const HostSample& h) -> Cell { return Number{static_cast<double>(h.cpu_count), 0}; }),
      HostField({"load.1"}, "", "Load average over 1 minute.", [](const HostSample& h) { return Num(h.load1, 2); }),
      HostField({"load.5"}, "", "Load average over 5 minutes.", [](const HostSample& h) { return Num(h.load5, 2); }),
      HostField({"load.15"}, "", "Load average over 15 minutes.",
                [](const HostSample& h) { return Num(h.load15, 2); }),
      HostField({"mem.total"}, "MiB", "Total host memory.", [](const HostSample& h) { return MiB(h.mem_total_bytes); }),
      HostField({"mem.used"}, "MiB", "Host memory in use (total minus available).",
                [](const HostSample& h) { return MiB(h.mem_used_bytes); }),
      HostField({"mem.available"}, "MiB", "Host memory available to new work without swapping.",
                [](const HostSample& h) { return MiB(h.mem_available_bytes); }),
      HostField({"swap.total"}, "MiB", "Total swap space.",
                [](const HostSample& h) { return MiB(h.swap_total_bytes); }),
      HostField({"swap.used"}, "MiB", "Swap space in use.", [](const HostSample& h) { return MiB(h.swap_used_bytes); }),
      HostField({"disk.read"}, "MiB/s", "Bytes read from all disks.",
                [](const HostSample& h) { return MiBPerS(h.disk_read_bytes_per_s); }),
      HostField({"disk.write"}, "MiB/s", "Bytes written to all disks.",
                [](const HostSample& h) { return MiBPerS(h.disk_write_bytes_per_s); }),
      HostField({"disk.read.iops"}, "", "Read operations per second, all disks.",
                [](const HostSample& h) { return Num(h.disk_read_iops, 1); }),
      HostField({"disk.write.iops"}, "", "Write operations per second, all disks.",
                [](const HostSample& h) { return Num(h.disk_write_iops, 1); }),
      HostField({"disk.util"}, "%", "Share of time the busiest disk had I/O in flight (iostat's %util).",
                [](const HostSample& h) { return Num(h.disk_busy_pct, 1); }),
      HostField({"net.rx"}, "MiB/s", "Bytes received on all interfaces except loopback.",
                [](const HostSample& h) { return MiBPerS(h.net_rx_bytes_per_s); }),
      HostField({"net.tx"}, "MiB/s", "Bytes sent on all interfaces except loopback.",
                [](const HostSample& h) { return MiBPerS(h.net_tx_bytes_per_s); }),

      TreeField({"proc.pid"}, "", "Process id of the tree's root.",
                [](const ProcTreeSample& t) -> Cell { return Number{static_cast<double>(t.root), 0}; }),
      TreeField({"proc.count"}, "", "Processes in the tree (the root and its descendants).",
                [](const ProcTreeSample& t) -> Cell { return Number{static_cast<double>(t.process_count), 0}; }),
      TreeField({"proc.threads"}, "", "Threads in the tree.",
                [](const ProcTreeSample& t) -> Cell { return Number{static_cast<double>(t.thread_count), 0}; }),
      TreeField({"proc.cpu"}, "%", "CPU use of the tree; 100 means one core busy (top's convention).",
                [](const ProcTreeSample& t) { return Num(t.cpu_pct, 1); }),
      TreeField({"proc.rss"}, "MiB", "Resident memory of the tree.",
                [](const ProcTreeSample& t) { return MiB(t.rss_bytes); }),
      TreeField({"proc.read"}, "MiB/s", "Bytes the tree read from storage.",
                [](const ProcTreeSample& t) { return MiBPerS(t.read_bytes_per_s); }),
      TreeField({"proc.write"}, "MiB/s", "Bytes the tree wrote to storage.",
                [](const ProcTreeSample& t) { return MiBPerS(t.write_bytes_per_s); }),
      TreeField({"proc.gpu.memory"}, "MiB", "GPU memory used by the tree's processes, over all GPUs.",
                [](const ProcTreeSample& t) { return MiB(t.gpu_memory_bytes); }),
      TreeField({"proc.samples_per_s"}, "",
                "Training samples per second over the last interval, as the command's PyTorch instrumentation "
                "(or `import saturate`) reports them; with -- CMD only.",
                [](const ProcTreeSample& t) { return Num(t.samples_per_s, 1); }),
      TreeField({"proc.steps_per_s"}, "", "Training steps per second over the last interval; with -- CMD only.",
                [](const ProcTreeSample& t) { return Num(t.steps_per_s, 2); }),
      TreeField({"proc.data_wait"}, "%",
                "Share of the training loop's time spent waiting for the DataLoader over the last interval; "
                "with -- CMD only.",
                [](const ProcTreeSample& t) -> Cell {
                  if (!t.data_wait_share) return {};
                  return Number{100 * *t.data_wait_share, 1};
                }),
  };
}

std::string_view ListingTitle(Scope scope) {
  switch (scope) {
    case Scope::kSample:
      return "Sample fields (--query-gpu or --query-host):";
    case Scope::kGpu:
      return "GPU fields (--query-gpu), named as nvidia-smi names them:";
    case Scope::kHost:
      return "Host fields (--query-host):";
    case Scope::kProc:
      return "Process tree fields (--query-host, with a watched process tree):";
  }
  return "";
}

}  // namespace

std::string CellText(const Cell& cell, std::string_view unit, bool with_unit) {
  if (const auto* n = std::get_if<Number>(&cell)) {
    std::string text = fmt::format("{:.{}f}", n->value, n->decimals);
    if (with_unit && !unit.empty()) text += fmt::format(" {}", unit);
    return text;
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "[N/A]";
}

std::string NvidiaTimestamp(double time_s) {
  // Whole milliseconds first: 1788295316.941 is stored as ...316.94099..., which must not print .940.
  long long total_ms = std::llround(time_s * 1000.0);
  long long millis = ((total_ms % 1000) + 1000) % 1000;
  std::time_t t = static_cast<std::time_t>((total_ms - millis) / 1000);
  std::tm local{};
  localtime_r(&t, &local);
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", local.tm_year + 1900, local.tm_mon + 1,
                     local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec, millis);
}

Cell Field::Read(const telemetry::Sample& s, const telemetry::GpuSample* row_gpu) const {
  switch (scope) {
    case Scope::kSample:
      return sample(s);
    case Scope::kGpu:
      return row_gpu ? gpu(*row_gpu) : Cell{};
    case Scope::kHost:
      return host(s.host);
    case Scope::kProc:
      return s.tree ? tree(*s.tree) : Cell{};
  }
  return {};
}

const std::vector<Field>& AllFields() {
  static const std::vector<Field> table = BuildTable();
  return table;
}

const Field* FindField(std::string_view name) {
  for (const Field& f : AllFields()) {
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return &f;
  }
  return nullptr;
}

std::string FieldListing() {
  std::string out;
  for (Scope scope : {Scope::kGpu, Scope::kSample, Scope::kHost, Scope::kProc}) {
    if (!out.empty()) out += "\n";
    out += fmt::format("{}\n", ListingTitle(scope));
    for (const Field& f : AllFields()) {
      if (f.scope != scope) continue;
      std::string names;
      for (std::string_view n : f.names) names += fmt::format("{}\"{}\"", names.empty() ? "" : " or ", n);
      std::string unit = f.unit.empty() ? "" : fmt::format(" [{}]", f.unit);
      out += fmt::format("  {}{}\n      {}\n", names, unit, f.help);
    }
  }
  return out;
}

}  // namespace sat::monitor
