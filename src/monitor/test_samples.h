// Samples for the monitor tests (header only; not part of the library). The first GPU carries
// the values of a real `nvidia-smi --query-gpu ... --format=csv` capture of an idle H200 (driver
// 580.173.02), so the CSV tests compare against what nvidia-smi printed for the same readings.
#pragma once

#include <cstdlib>
#include <ctime>

#include "telemetry/sample.h"

namespace sat::monitor::testing {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kGiB = kMiB * 1024;

// Timestamps print in local time; tests pin the zone.
inline void UseUtc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

inline telemetry::GpuSample IdleH200() {
  telemetry::GpuSample g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  g.pci_bus_id = "00000000:83:00.0";
  g.driver_version = "580.173.02";
  g.util_gpu_pct = 0;
  g.util_memory_pct = 0;
  g.memory_total_bytes = 143771 * kMiB;
  g.memory_used_bytes = 0;
  g.memory_free_bytes = 143156 * kMiB;
  g.temperature_c = 37;
  g.power_draw_w = 85.12;
  g.power_limit_w = 700;
  g.clock_sm_mhz = 345;
  g.clock_memory_mhz = 3201;
  g.pcie_link_gen = 5;
  g.pcie_link_width = 16;
  g.pstate = 0;
  // fan_pct stays unset: the H200 has no fan of its own and nvidia-smi printed [N/A].
  return g;
}

inline telemetry::GpuSample BusyH200(unsigned index) {
  telemetry::GpuSample g = IdleH200();
  g.index = index;
  g.pci_bus_id = "00000000:9B:00.0";
  g.util_gpu_pct = 82;
  g.util_memory_pct = 41;
  g.memory_used_bytes = 5959 * kMiB + 123;  // a part MiB, which nvidia-smi drops
  g.temperature_c = 71;
  g.power_draw_w = 250.4;
  g.clock_sm_mhz = 1980;
  g.pcie_tx_bytes_per_s = 1.5 * kMiB;
  g.pcie_rx_bytes_per_s = 1234.5678 * kMiB;
  g.processes = {{.pid = 4242, .used_memory_bytes = 5000 * kMiB}, {.pid = 4243, .used_memory_bytes = {}}};
  return g;
}

// The first sample of a run: counters only, so every rate and utilisation is N/A.
inline telemetry::HostSample FirstHost() {
  telemetry::HostSample h;
  h.cpu_count = 2;
  h.load1 = 0.5;
  h.load5 = 0.5;
  h.load15 = 0.25;
  h.mem_total_bytes = 24 * kGiB;
  h.mem_used_bytes = 8 * kGiB;
  h.mem_available_bytes = 16 * kGiB;
  return h;
}

inline telemetry::HostSample BusyHost() {
  telemetry::HostSample h = FirstHost();
  h.cpu_util_pct = 37.46;
  h.core_util_pct = {50.0, 24.9};
  h.cpu_iowait_pct = 2.1;
  h.load1 = 1.23;
  h.mem_used_bytes = 8 * kGiB + 100 * kMiB;
  h.mem_available_bytes = 16 * kGiB - 100 * kMiB;
  h.swap_total_bytes = 2 * kGiB;
  h.swap_used_bytes = 0;
  h.disks = {{.name = "nvme0n1",
              .read_bytes_per_s = 12.0 * kMiB,
              .write_bytes_per_s = 0.3 * kMiB,
              .read_iops = 96,
              .write_iops = 4.5,
              .busy_pct = 4.2}};
  h.nets = {{.name = "eth0", .rx_bytes_per_s = 0.1 * kMiB, .tx_bytes_per_s = 0.02 * kMiB}};
  h.disk_read_bytes_per_s = 12.0 * kMiB;
  h.disk_write_bytes_per_s = 0.3 * kMiB;
  h.disk_read_iops = 96;
  h.disk_write_iops = 4.5;
  h.disk_busy_pct = 4.2;
  h.net_rx_bytes_per_s = 0.1 * kMiB;
  h.net_tx_bytes_per_s = 0.02 * kMiB;
  return h;
}

inline telemetry::ProcTreeSample BusyTree() {
  telemetry::ProcTreeSample t;
  t.root = 4242;
  t.alive = true;
  t.pids = {4242, 4243, 4250};
  t.process_count = 3;
  t.thread_count = 31;
  t.cpu_pct = 180.04;
  t.rss_bytes = 1228 * kMiB;
  t.read_bytes_per_s = 40.1 * kMiB;
  t.write_bytes_per_s = 0;
  t.gpu_memory_bytes = 5000 * kMiB;
  return t;
}

// 2026/09/01 20:41:56.941 UTC, the time of the capture.
constexpr double kCaptureTime = 1788295316.941;

inline telemetry::Sample IdleSample() {
  telemetry::Sample s;
  s.time_s = kCaptureTime;
  s.mono_s = 1000.5;
  s.host = BusyHost();
  s.gpus = {IdleH200()};
  return s;
}

inline telemetry::Sample TwoGpuSample() {
  telemetry::Sample s = IdleSample();
  s.gpus = {IdleH200(), BusyH200(1)};
  s.tree = BusyTree();
  return s;
}

}  // namespace sat::monitor::testing
