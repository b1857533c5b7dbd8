// Plain data that every collector fills and every presenter reads. No behaviour here.
//
// Validity: a field the hardware or kernel does not report is std::nullopt ("N/A"), never 0.
// Units are in the field names: _bytes, _bytes_per_s, _pct (0..100), _mhz, _w, _c, _s.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sat::telemetry {

template <class T>
using Opt = std::optional<T>;

// One process using a GPU, from NVML's running-process lists (compute and graphics merged).
struct GpuProcess {
  pid_t pid = 0;
  Opt<uint64_t> used_memory_bytes;
};

// One GPU at one instant. Strings are empty when unknown.
struct GpuSample {
  unsigned index = 0;
  std::string name, uuid, pci_bus_id, driver_version;
  Opt<double> util_gpu_pct, util_memory_pct;
  Opt<uint64_t> memory_total_bytes, memory_used_bytes, memory_free_bytes;
  Opt<double> temperature_c;
  Opt<double> power_draw_w, power_limit_w;
  // The board's energy since the driver was loaded (nvmlDeviceGetTotalEnergyConsumption, Volta and later), in
  // joules: a counter, so energy over an interval is the difference of two samples.
  Opt<double> energy_j;
  Opt<double> clock_sm_mhz, clock_memory_mhz;
  Opt<unsigned> pcie_link_gen, pcie_link_width;
  Opt<double> pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;
  Opt<unsigned> pstate;  // 0 = P0 (fastest) .. 15
  Opt<double> fan_pct;
  // NVML's GPM counters (Hopper and later), 0..100, averaged over the interval from an earlier sample at least
  // 0.1 s before this one (telemetry/nvml.h): share of SMs with a warp assigned, resident warps of the maximum,
  // tensor-core activity, DRAM bandwidth of the peak. nullopt on older GPUs and drivers, and in the first sample.
  Opt<double> gpm_sm_active_pct, gpm_sm_occupancy_pct, gpm_tensor_active_pct, gpm_dram_bw_util_pct;
  std::vector<GpuProcess> processes;
};

struct DiskRates {
  std::string name;  // e.g. "sda", "nvme0n1"; whole devices only, no partitions
  double read_bytes_per_s = 0, write_bytes_per_s = 0;
  double read_iops = 0, write_iops = 0;
  double busy_pct = 0;  // share of wall time with I/O in flight (iostat's %util)
};

struct NetRates {
  std::string name;
  double rx_bytes_per_s = 0, tx_bytes_per_s = 0;
};

// The whole machine over the interval that ended at the sample's timestamp.
// Rate and utilisation fields are nullopt in the first sample (no previous counters yet).
struct HostSample {
  Opt<double> cpu_util_pct;             // all cores, 100 = every core busy
  std::vector<Opt<double>> core_util_pct;  // per core, same scale per core
  Opt<double> cpu_iowait_pct;
  unsigned cpu_count = 0;
  Opt<double> load1, load5, load15;
  Opt<uint64_t> mem_total_bytes, mem_used_bytes, mem_available_bytes;
  Opt<uint64_t> swap_total_bytes, swap_used_bytes;
  std::vector<DiskRates> disks;  // empty in the first sample
  std::vector<NetRates> nets;    // loopback excluded
  // Sums and maxima over disks and interfaces, nullopt until rates exist.
  Opt<double> disk_read_bytes_per_s, disk_write_bytes_per_s, disk_read_iops, disk_write_iops, disk_busy_pct;
  Opt<double> net_rx_bytes_per_s, net_tx_bytes_per_s;
  // The CPU packages' energy since the sampler started (RAPL, telemetry/rapl.h), in joules: a counter, so energy
  // over an interval is the difference of two samples. nullopt without readable RAPL counters.
  Opt<double> cpu_energy_j;
};

// A process and all its descendants (a trainer and its DataLoader workers).
struct ProcTreeSample {
  pid_t root = 0;
  bool alive = false;                 // false once the root and every descendant are gone
  std::vector<pid_t> pids;            // root first
  unsigned process_count = 0, thread_count = 0;
  unsigned worker_count = 0;          // DataLoader workers among the processes (telemetry::CountForkedWorkers)
  Opt<double> cpu_pct;                // 100 = one core busy (top's convention)
  Opt<double> sys_cpu_pct;            // of cpu_pct, the part in the kernel (stime): system calls, FUSE and NFS reads
  Opt<uint64_t> rss_bytes;
  Opt<double> read_bytes_per_s, write_bytes_per_s;  // storage I/O (/proc/PID/io read_bytes)
  Opt<double> rchar_per_s;            // bytes read by any read()-like call, page cache included (rchar)
  unsigned blocked_count = 0;         // members waiting in the kernel ('D': disk, NFS or FUSE reads) at this tick
  Opt<uint64_t> gpu_memory_bytes;     // sum over the tree's pids in NVML's lists; nullopt without NVML
  // Training throughput over the last sampling interval, from the helper channel (monitor::TrainingMeter; the
  // sampler leaves them unset); nullopt while nothing has reported.
  Opt<double> samples_per_s, steps_per_s;
  Opt<double> data_wait_share;  // 0..1 of the loop time spent waiting for the loader
};

// One tick of the sampler.
struct Sample {
  double time_s = 0;      // seconds since the Unix epoch (wall clock), for timestamps
  double mono_s = 0;      // CLOCK_MONOTONIC seconds, for intervals
  HostSample host;
  std::vector<GpuSample> gpus;   // only the GPUs selected; empty without NVML
  Opt<ProcTreeSample> tree;      // present when a process tree is watched
};

// The GPU of NVML index `index` in `s`, or null when it was not sampled (the pointer lives as long as `s`).
inline const GpuSample* GpuOf(const Sample& s, int index) {
  for (const GpuSample& g : s.gpus) {
    if (static_cast<int>(g.index) == index) return &g;
  }
  return nullptr;
}

}  // namespace sat::telemetry
