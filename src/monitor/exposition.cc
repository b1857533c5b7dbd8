#include "monitor/exposition.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>

#include "util/redact.h"
#include "util/utf8.h"

namespace sat::monitor {
namespace {

using telemetry::GpuSample;
using telemetry::HostSample;
using telemetry::Opt;
using telemetry::ProcTreeSample;

constexpr double kMiB = 1024.0 * 1024.0;
// A command line longer than this is cut in the `command` label: labels are for telling series apart.
constexpr size_t kMaxCommandLabel = 200;

// `divisor` 100 turns a percentage into a ratio.
template <class T>
Opt<double> Num(const Opt<T>& v, double divisor = 1) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) / divisor;
}

// Whole MiB rounded down, as DCGM and nvidia-smi report framebuffer memory.
Opt<double> WholeMiB(const Opt<uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes / (1024 * 1024));
}

// One metric family: its name, type and help, and how to read its value from one source record.
template <class Source>
struct Metric {
  std::string_view name, type, help;
  std::function<Opt<double>(const Source&)> read;
};

// Dcgm-exporter's texts where it has the field (etc/default-counters.csv, etc/dcp-metrics-included.csv); DCGM's
// field descriptions for FB_TOTAL, FAN_SPEED and PSTATE, which its default files leave out.
const std::vector<Metric<GpuSample>>& GpuMetrics() {
  static const std::vector<Metric<GpuSample>> metrics = {
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
       [](const GpuSample& g) { return g.clock_sm_mhz; }},
      {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).",
       [](const GpuSample& g) { return g.clock_memory_mhz; }},
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", [](const GpuSample& g) { return g.temperature_c; }},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", [](const GpuSample& g) { return g.power_draw_w; }},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).",
       [](const GpuSample& g) { return g.energy_j ? std::optional<double>(*g.energy_j * 1000) : std::nullopt; }},
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", [](const GpuSample& g) { return g.util_gpu_pct; }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
       [](const GpuSample& g) { return g.util_memory_pct; }},
      {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
       [](const GpuSample& g) { return WholeMiB(g.memory_free_bytes); }},
      {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
       [](const GpuSample& g) { return WholeMiB(g.memory_used_bytes); }},
      {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Total framebuffer memory (in MiB).",
       [](const GpuSample& g) { return WholeMiB(g.memory_total_bytes); }},
      {"DCGM_FI_DEV_FAN_SPEED", "gauge", "Fan speed for the device in percent 0-100.",
       [](const GpuSample& g) { return g.fan_pct; }},
      {"DCGM_FI_DEV_PSTATE", "gauge", "Performance state (P-State) 0-15. 0=highest",
       [](const GpuSample& g) { return Num(g.pstate); }},
      // DCGM's profiling fields are ratios; NVML's GPM gives the same activities in percent.
      {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.",
       [](const GpuSample& g) { return Num(g.gpm_sm_active_pct, 100); }},
      {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.",
       [](const GpuSample& g) { return Num(g.gpm_sm_occupancy_pct, 100); }},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.",
       [](const GpuSample& g) { return Num(g.gpm_tensor_active_pct, 100); }},
      {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
       "Ratio of cycles the device memory interface is active sending or receiving data.",
       [](const GpuSample& g) { return Num(g.gpm_dram_bw_util_pct, 100); }},
  };
  return metrics;
}

const std::vector<Metric<HostSample>>& HostMetrics() {
  static const std::vector<Metric<HostSample>> metrics = {
      {"saturate_host_cpu_utilization_ratio", "gauge",
       "Share of all CPU time that was busy over the last sampling interval (1 = every core busy).",
       [](const HostSample& h) { return Num(h.cpu_util_pct, 100); }},
      {"saturate_host_cpu_iowait_ratio", "gauge",
       "Share of all CPU time idle while waiting for I/O over the last sampling interval.",
       [](const HostSample& h) { return Num(h.cpu_iowait_pct, 100); }},
      {"saturate_host_cpus", "gauge", "Online CPUs.",
       [](const HostSample& h) -> Opt<double> {
         if (h.cpu_count == 0) return std::nullopt;
         return static_cast<double>(h.cpu_count);
       }},
      {"saturate_host_load1", "gauge", "Load average over 1 minute.", [](const HostSample& h) { return h.load1; }},
      {"saturate_host_load5", "gauge", "Load average over 5 minutes.", [](const HostSample& h) { return h.load5; }},
      {"saturate_host_load15", "gauge", "Load average over 15 minutes.",
       [](const HostSample& h) { return h.load15; }},
      {"saturate_host_memory_total_bytes", "gauge", "Total host memory.",
       [](const HostSample& h) { return Num(h.mem_total_bytes); }},
      {"saturate_host_memory_used_bytes", "gauge", "Host memory in use (total minus available).",
       [](const HostSample& h) { return Num(h.mem_used_bytes); }},
      {"saturate_host_memory_available_bytes", "gauge", "Host memory available to new work without swapping.",
       [](const HostSample& h) { return Num(h.mem_available_bytes); }},
      {"saturate_host_swap_total_bytes", "gauge", "Total swap space.",
       [](const HostSample& h) { return Num(h.swap_total_bytes); }},
      {"saturate_host_swap_used_bytes", "gauge", "Swap space in use.",
       [](const HostSample& h) { return Num(h.swap_used_bytes); }},
      {"saturate_host_disk_read_bytes_per_second", "gauge", "Bytes read from all disks over the last interval.",
       [](const HostSample& h) { return h.disk_read_bytes_per_s; }},
      {"saturate_host_disk_written_bytes_per_second", "gauge", "Bytes written to all disks over the last interval.",
       [](const HostSample& h) { return h.disk_write_bytes_per_s; }},
      {"saturate_host_disk_busy_ratio", "gauge",
       "Share of the last interval the busiest disk had I/O in flight (iostat's %util / 100).",
       [](const HostSample& h) { return Num(h.disk_busy_pct, 100); }},
      {"saturate_host_network_receive_bytes_per_second", "gauge",
       "Bytes received on all interfaces but loopback over the last interval.",
       [](const HostSample& h) { return h.net_rx_bytes_per_s; }},
      {"saturate_host_network_transmit_bytes_per_second", "gauge",
       "Bytes sent on all interfaces but loopback over the last interval.",
       [](const HostSample& h) { return h.net_tx_bytes_per_s; }},
  };
  return metrics;
}

const std::vector<Metric<ProcTreeSample>>& TreeMetrics() {
  static const std::vector<Metric<ProcTreeSample>> metrics = {
      {"saturate_process_cpu_cores", "gauge",
       "CPU use of the watched process tree over the last interval, in cores (1 = one core busy).",
       [](const ProcTreeSample& t) { return Num(t.cpu_pct, 100); }},
      {"saturate_process_resident_memory_bytes", "gauge", "Resident memory of the watched process tree.",
       [](const ProcTreeSample& t) { return Num(t.rss_bytes); }},
      {"saturate_process_read_bytes_per_second", "gauge", "Bytes the process tree read from storage.",
       [](const ProcTreeSample& t) { return t.read_bytes_per_s; }},
      {"saturate_process_written_bytes_per_second", "gauge", "Bytes the process tree wrote to storage.",
       [](const ProcTreeSample& t) { return t.write_bytes_per_s; }},
      {"saturate_process_gpu_memory_bytes", "gauge", "GPU memory used by the tree's processes, over all GPUs.",
       [](const ProcTreeSample& t) { return Num(t.gpu_memory_bytes); }},
      {"saturate_process_processes", "gauge", "Processes in the tree (its root and every descendant).",
       [](const ProcTreeSample& t) { return Num(Opt<unsigned>(t.process_count)); }},
      {"saturate_process_threads", "gauge", "Threads in the tree.",
       [](const ProcTreeSample& t) { return Num(Opt<unsigned>(t.thread_count)); }},
      {"saturate_process_dataloader_workers", "gauge", "DataLoader worker processes in the tree.",
       [](const ProcTreeSample& t) { return Num(Opt<unsigned>(t.worker_count)); }},
      {"saturate_process_samples_per_second", "gauge",
       "Training samples per second over the last interval, as the command's PyTorch instrumentation reports them.",
       [](const ProcTreeSample& t) { return t.samples_per_s; }},
      {"saturate_process_steps_per_second", "gauge", "Training steps per second over the last interval.",
       [](const ProcTreeSample& t) { return t.steps_per_s; }},
      {"saturate_process_data_wait_ratio", "gauge",
       "Share of the training loop's time spent waiting for the DataLoader over the last interval.",
       [](const ProcTreeSample& t) { return t.data_wait_share; }},
  };
  return metrics;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// Writes families one after the other; a family's HELP and TYPE lines come with its first series, so a family
// whose every value is N/A leaves no trace.
class PageWriter {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = name;
    type_ = type;
    help_ = help;
    started_ = false;
  }

  void Series(const live::Labels& labels, Opt<double> value) {
    if (!value) return;
    if (!started_) {
      page_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, EscapeHelp(help_), name_, type_);
      started_ = true;
    }
    page_ += name_;
    if (!labels.empty()) {
      page_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        page_ += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", labels[i].first, EscapeLabelValue(labels[i].second));
      }
      page_ += '}';
    }
    page_ += fmt::format(" {}\n", ExpositionValue(*value));
  }

  std::string Take() { return std::move(page_); }

 private:
  std::string page_;
  std::string_view name_, type_, help_;
  bool started_ = false;
};

// dcgm-exporter's label set of a GPU series.
live::Labels GpuLabels(const GpuSample& g, const std::string& hostname) {
  live::Labels labels = {{"gpu", std::to_string(g.index)},
                   {"UUID", g.uuid},
                   {"pci_bus_id", g.pci_bus_id},
                   {"device", fmt::format("nvidia{}", g.index)},
                   {"modelName", g.name}};
  if (!hostname.empty()) labels.emplace_back("Hostname", hostname);
  return labels;
}

std::string CommandLabel(const std::string& command) {
  return ClipText(RedactCommandLine(command), kMaxCommandLabel);
}

}  // namespace

std::string ExpositionValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::trunc(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{}", value);
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : ValidUtf8(value)) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string RenderExposition(const live::Figures& in) {
  PageWriter page;
  if (in.sample) {
    const telemetry::Sample& s = *in.sample;
    for (const auto& m : GpuMetrics()) {
      page.Family(m.name, m.type, m.help);
      for (const GpuSample& g : s.gpus) page.Series(GpuLabels(g, in.hostname), m.read(g));
    }
    for (const auto& m : HostMetrics()) {
      page.Family(m.name, m.type, m.help);
      page.Series({}, m.read(s.host));
    }
    // A tree that is gone has no figures (its CPU and rates would read as a stall).
    if (s.tree && s.tree->alive) {
      const live::Labels labels = {{"pid", std::to_string(s.tree->root)}, {"command", CommandLabel(in.tree_command)}};
      for (const auto& m : TreeMetrics()) {
        page.Family(m.name, m.type, m.help);
        page.Series(labels, m.read(*s.tree));
      }
    }
  }
  page.Family("saturate_run_samples_per_second", "gauge",
              "Training samples per second of a run saturate drives (a probe stage, a tune trial, a sweep run) over "
              "its last few seconds.");
  for (const live::RunSeries& run : in.runs) page.Series(run.labels, run.samples_per_s);
  return page.Take();
}

}  // namespace sat::monitor
