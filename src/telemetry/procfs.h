// The whole machine from /proc and /sys: reading raw kernel counters, and the pure arithmetic that turns two
// readings into rates (HostSample).
//
// Reading and arithmetic are apart so that tests can feed fixture trees (tests/fixtures/proc-a, proc-b) or plain
// strings and check rates exactly. The low-level pieces here (FileReader, the field scanners) are shared with
// proc_tree.h.
//
// Cost: one HostReader::Read is five open()+read()+close() of small files into a reused buffer, hand-parsed;
// /sys is consulted once per block device name and then cached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "telemetry/sample.h"

namespace sat::telemetry {

// Where the kernel's pseudo file systems are mounted. Tests point these at fixture trees.
struct ProcRoots {
  std::string proc = "/proc";
  std::string sys = "/sys";
};

// Reads small pseudo files whole with open()+read() into one buffer that it keeps, so that a warm reader
// allocates nothing. Not thread-safe; one per collecting thread.
class FileReader {
 public:
  // The file's contents, valid until the next Read on this reader; nullopt when the file cannot be opened or
  // read (missing, permission denied, process gone).
  std::optional<std::string_view> Read(const std::string& path);

 private:
  std::string buf_;
};

// Field scanning for pseudo-file text. Fields are separated by spaces or tabs; lines by '\n'.

// Takes the next line (without its '\n') off the front of *text; false when nothing is left.
bool NextLine(std::string_view* text, std::string_view* line);
// Takes the next field off the front of *line; empty when the line has no more fields.
std::string_view NextField(std::string_view* line);
// The whole field as an unsigned decimal number; nullopt on anything else.
std::optional<uint64_t> ParseU64(std::string_view field);
// The whole field as a decimal number ("0.75"); nullopt on anything else.
std::optional<double> ParseF64(std::string_view field);
// NextField then ParseU64.
std::optional<uint64_t> NextU64(std::string_view* line);

// The growth of a cumulative counter; 0 when it went backwards (a reset, or the kernel's iowait jitter).
inline uint64_t CounterDelta(uint64_t cur, uint64_t prev) { return cur >= prev ? cur - prev : 0; }

// Cumulative CPU time of one "cpu" line of /proc/stat, in clock ticks. Guest time is already inside user and
// nice, so it is not kept.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
};

struct CpuCounters {
  CpuTimes total;
  std::vector<std::optional<CpuTimes>> cores;  // indexed by CPU number; nullopt for a CPU that is offline
};

struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
};

struct MemInfo {
  std::optional<uint64_t> total_bytes, available_bytes, swap_total_bytes, swap_free_bytes;
};

// One line of /proc/diskstats. Sectors are always 512 bytes there, whatever the device's sector size.
struct DiskCounters {
  std::string name;
  uint64_t reads = 0, writes = 0;  // I/Os completed
  uint64_t read_sectors = 0, write_sectors = 0;
  uint64_t io_ms = 0;  // milliseconds with at least one I/O in flight
};

struct NetCounters {
  std::string name;
  uint64_t rx_bytes = 0, tx_bytes = 0;
};

// One reading of every host source. A source that could not be read is nullopt or empty.
struct HostCounters {
  std::optional<CpuCounters> cpu;
  std::optional<LoadAvg> load;
  MemInfo mem;
  std::vector<DiskCounters> disks;  // whole, non-virtual devices only (see HostReader)
  std::vector<NetCounters> nets;    // loopback excluded
};

// Parsers: the text of one file to its counters. They never fail outright: lines that do not have the expected
// shape are skipped, and a missing aggregate is nullopt.
std::optional<CpuCounters> ParseCpuStat(std::string_view proc_stat);
std::optional<LoadAvg> ParseLoadAvg(std::string_view proc_loadavg);
MemInfo ParseMemInfo(std::string_view proc_meminfo);
std::vector<DiskCounters> ParseDiskStats(std::string_view proc_diskstats);  // every device, partitions included
std::vector<NetCounters> ParseNetDev(std::string_view proc_net_dev);        // loopback ("lo") excluded

// How /proc/diskstats names are classified when /sys/block cannot be read: loop*, ram*, zram*, dm-* and md* are
// not counted (virtual, or stacked on devices that are), and partitions are recognised by name ("sda1",
// "nvme0n1p2", "mmcblk0p1"). With /sys, HostReader uses the kernel's own answer instead.
enum class DiskKind { kWhole, kPartition, kVirtual };
DiskKind ClassifyDiskByName(std::string_view name);

// Rates over the interval between two readings. `prev` is nullptr for the first reading: then only the
// instantaneous fields (memory, load, cpu_count) are filled and every rate stays nullopt.
//   - CPU utilisation = 1 - (idle + iowait) / total of the tick deltas; iowait% = iowait / total. A per-field
//     counter that went backwards (the kernel's iowait can) counts as 0 for that field.
//   - A disk or interface is rated only when it is in both readings and none of its counters went backwards
//     (a re-created interface restarts at 0). busy% = io_ms delta / interval, capped at 100.
//   - Aggregates: byte and IOPS rates are sums over the rated devices, disk busy% is the maximum; all nullopt
//     when no device was rated.
// `interval_s` is the wall time between the two readings (> 0, else no rates).
HostSample ComputeHostSample(const HostCounters* prev, const HostCounters& cur, double interval_s);

// Reads HostCounters from the files under `roots`. Block devices are filtered as the kernel sees them: a
// diskstats name without /sys/block/<name> is a partition; loop, ram and zram devices are skipped, and so are
// devices stacked on others (a non-empty /sys/block/<name>/slaves: dm-*, md*), whose traffic the devices below
// already count. When <sys>/block is not there at all, ClassifyDiskByName decides. A device's class is looked
// up once and cached. Not thread-safe.
class HostReader {
 public:
  explicit HostReader(ProcRoots roots);

  HostCounters Read();

 private:
  bool CountsAsDisk(const std::string& name);

  ProcRoots roots_;
  std::string stat_path_, loadavg_path_, meminfo_path_, diskstats_path_, netdev_path_;
  bool have_sys_block_ = false;
  std::unordered_map<std::string, bool> disk_class_cache_;  // name -> counted as a disk
  FileReader reader_;
};

}  // namespace sat::telemetry
