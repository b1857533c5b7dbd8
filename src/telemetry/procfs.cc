#include "telemetry/procfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>

#include "util/strings.h"

namespace sat::telemetry {

std::optional<std::string_view> FileReader::Read(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  if (buf_.size() < 4096) buf_.resize(4096);
  size_t used = 0;
  while (true) {
    if (used == buf_.size()) buf_.resize(buf_.size() * 2);
    ssize_t n = ::read(fd, buf_.data() + used, buf_.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  return std::string_view(buf_.data(), used);
}

bool NextLine(std::string_view* text, std::string_view* line) {
  if (text->empty()) return false;
  size_t nl = text->find('\n');
  if (nl == std::string_view::npos) {
    *line = *text;
    *text = {};
  } else {
    *line = text->substr(0, nl);
    text->remove_prefix(nl + 1);
  }
  return true;
}

std::string_view NextField(std::string_view* line) {
  size_t start = line->find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    *line = {};
    return {};
  }
  size_t end = line->find_first_of(" \t", start);
  if (end == std::string_view::npos) end = line->size();
  std::string_view field = line->substr(start, end - start);
  line->remove_prefix(end);
  return field;
}

namespace {

template <class T>
std::optional<T> ParseWholeField(std::string_view field) {
  T v{};
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<uint64_t> ParseU64(std::string_view field) { return ParseWholeField<uint64_t>(field); }

std::optional<double> ParseF64(std::string_view field) { return ParseWholeField<double>(field); }

std::optional<uint64_t> NextU64(std::string_view* line) { return ParseU64(NextField(line)); }

namespace {

// The counters after the "cpuN" label. Kernels before 2.6.11 stop after idle; later fields then stay 0.
std::optional<CpuTimes> ParseCpuLine(std::string_view rest) {
  CpuTimes t;
  std::array<uint64_t*, 8> fields = {&t.user, &t.nice, &t.system, &t.idle, &t.iowait, &t.irq, &t.softirq, &t.steal};
  for (size_t i = 0; i < fields.size(); ++i) {
    std::optional<uint64_t> v = NextU64(&rest);
    if (!v) {
      if (i < 4) return std::nullopt;
      break;
    }
    *fields[i] = *v;
  }
  return t;
}

struct CpuShares {
  double util_pct = 0, iowait_pct = 0;
};

std::optional<CpuShares> SharesBetween(const CpuTimes& a, const CpuTimes& b) {
  uint64_t idle = CounterDelta(b.idle, a.idle);
  uint64_t iowait = CounterDelta(b.iowait, a.iowait);
  uint64_t busy = CounterDelta(b.user, a.user) + CounterDelta(b.nice, a.nice) + CounterDelta(b.system, a.system) +
                  CounterDelta(b.irq, a.irq) + CounterDelta(b.softirq, a.softirq) + CounterDelta(b.steal, a.steal);
  uint64_t total = busy + idle + iowait;
  if (total == 0) return std::nullopt;
  return CpuShares{100.0 * static_cast<double>(busy) / static_cast<double>(total),
                   100.0 * static_cast<double>(iowait) / static_cast<double>(total)};
}

template <class T>
const T* FindByName(const std::vector<T>& items, const std::string& name) {
  for (const T& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}

void FillCpu(const CpuCounters* prev, const CpuCounters& cur, HostSample* out) {
  out->cpu_count = static_cast<unsigned>(std::count_if(cur.cores.begin(), cur.cores.end(),
                                                       [](const std::optional<CpuTimes>& c) { return c.has_value(); }));
  out->core_util_pct.assign(cur.cores.size(), std::nullopt);
  if (!prev) return;
  if (std::optional<CpuShares> s = SharesBetween(prev->total, cur.total)) {
    out->cpu_util_pct = s->util_pct;
    out->cpu_iowait_pct = s->iowait_pct;
  }
  for (size_t i = 0; i < cur.cores.size() && i < prev->cores.size(); ++i) {
    if (!cur.cores[i] || !prev->cores[i]) continue;
    if (std::optional<CpuShares> s = SharesBetween(*prev->cores[i], *cur.cores[i])) out->core_util_pct[i] = s->util_pct;
  }
}

void FillMemory(const MemInfo& mem, HostSample* out) {
  out->mem_total_bytes = mem.total_bytes;
  out->mem_available_bytes = mem.available_bytes;
  if (mem.total_bytes && mem.available_bytes && *mem.total_bytes >= *mem.available_bytes) {
    out->mem_used_bytes = *mem.total_bytes - *mem.available_bytes;
  }
  out->swap_total_bytes = mem.swap_total_bytes;
  if (mem.swap_total_bytes && mem.swap_free_bytes && *mem.swap_total_bytes >= *mem.swap_free_bytes) {
    out->swap_used_bytes = *mem.swap_total_bytes - *mem.swap_free_bytes;
  }
}

void FillDisks(const std::vector<DiskCounters>& prev, const std::vector<DiskCounters>& cur, double interval_s,
               HostSample* out) {
  constexpr double kSectorBytes = 512;
  for (const DiskCounters& b : cur) {
    const DiskCounters* a = FindByName(prev, b.name);
    if (!a || b.reads < a->reads || b.writes < a->writes || b.read_sectors < a->read_sectors ||
        b.write_sectors < a->write_sectors || b.io_ms < a->io_ms) {
      continue;
    }
    DiskRates r;
    r.name = b.name;
    r.read_bytes_per_s = static_cast<double>(b.read_sectors - a->read_sectors) * kSectorBytes / interval_s;
    r.write_bytes_per_s = static_cast<double>(b.write_sectors - a->write_sectors) * kSectorBytes / interval_s;
    r.read_iops = static_cast<double>(b.reads - a->reads) / interval_s;
    r.write_iops = static_cast<double>(b.writes - a->writes) / interval_s;
    r.busy_pct = std::min(100.0, static_cast<double>(b.io_ms - a->io_ms) / (interval_s * 1000.0) * 100.0);
    out->disks.push_back(std::move(r));
  }
  if (out->disks.empty()) return;
  out->disk_read_bytes_per_s = out->disk_write_bytes_per_s = out->disk_read_iops = out->disk_write_iops = 0.0;
  out->disk_busy_pct = 0.0;
  for (const DiskRates& r : out->disks) {
    *out->disk_read_bytes_per_s += r.read_bytes_per_s;
    *out->disk_write_bytes_per_s += r.write_bytes_per_s;
    *out->disk_read_iops += r.read_iops;
    *out->disk_write_iops += r.write_iops;
    out->disk_busy_pct = std::max(*out->disk_busy_pct, r.busy_pct);
  }
}

void FillNets(const std::vector<NetCounters>& prev, const std::vector<NetCounters>& cur, double interval_s,
              HostSample* out) {
  for (const NetCounters& b : cur) {
    const NetCounters* a = FindByName(prev, b.name);
    if (!a || b.rx_bytes < a->rx_bytes || b.tx_bytes < a->tx_bytes) continue;
    out->nets.push_back(NetRates{b.name, static_cast<double>(b.rx_bytes - a->rx_bytes) / interval_s,
                                 static_cast<double>(b.tx_bytes - a->tx_bytes) / interval_s});
  }
  if (out->nets.empty()) return;
  out->net_rx_bytes_per_s = out->net_tx_bytes_per_s = 0.0;
  for (const NetRates& r : out->nets) {
    *out->net_rx_bytes_per_s += r.rx_bytes_per_s;
    *out->net_tx_bytes_per_s += r.tx_bytes_per_s;
  }
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool DirHasEntries(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return false;
  bool found = false;
  while (dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

bool EndsWithDigit(std::string_view s) { return !s.empty() && s.back() >= '0' && s.back() <= '9'; }

}  // namespace

std::optional<CpuCounters> ParseCpuStat(std::string_view proc_stat) {
  CpuCounters out;
  bool have_total = false;
  std::string_view line;
  while (NextLine(&proc_stat, &line)) {
    std::string_view label = NextField(&line);
    // The cpu lines come first; stop before the long interrupt lines.
    if (!StartsWith(label, "cpu")) break;
    std::optional<CpuTimes> times = ParseCpuLine(line);
    if (!times) continue;
    if (label == "cpu") {
      out.total = *times;
      have_total = true;
    } else if (std::optional<uint64_t> index = ParseU64(label.substr(3)); index && *index < 65536) {
      if (out.cores.size() <= *index) out.cores.resize(*index + 1);
      out.cores[*index] = *times;
    }
  }
  if (!have_total) return std::nullopt;
  return out;
}

std::optional<LoadAvg> ParseLoadAvg(std::string_view proc_loadavg) {
  std::optional<double> l1 = ParseF64(NextField(&proc_loadavg));
  std::optional<double> l5 = ParseF64(NextField(&proc_loadavg));
  std::optional<double> l15 = ParseF64(NextField(&proc_loadavg));
  if (!l1 || !l5 || !l15) return std::nullopt;
  return LoadAvg{*l1, *l5, *l15};
}

MemInfo ParseMemInfo(std::string_view proc_meminfo) {
  MemInfo out;
  struct Key {
    std::string_view name;
    std::optional<uint64_t>* field;
  };
  const std::array<Key, 4> keys = {Key{"MemTotal", &out.total_bytes}, Key{"MemAvailable", &out.available_bytes},
                                   Key{"SwapTotal", &out.swap_total_bytes}, Key{"SwapFree", &out.swap_free_bytes}};
  size_t found = 0;
  std::string_view line;
  while (found < keys.size() && NextLine(&proc_meminfo, &line)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon);
    line.remove_prefix(colon + 1);
    for (const Key& key : keys) {
      if (name != key.name) continue;
      // Values are in kibibytes whatever the "kB" says.
      if (std::optional<uint64_t> kib = NextU64(&line)) {
        *key.field = *kib * 1024;
        ++found;
      }
      break;
    }
  }
  return out;
}

std::vector<DiskCounters> ParseDiskStats(std::string_view proc_diskstats) {
  std::vector<DiskCounters> out;
  std::string_view line;
  while (NextLine(&proc_diskstats, &line)) {
    NextField(&line);  // major
    NextField(&line);  // minor
    DiskCounters d;
    d.name = std::string(NextField(&line));
    // Fields 1..10 after the name: reads, reads merged, sectors read, ms reading, writes, writes merged,
    // sectors written, ms writing, I/Os in flight, ms doing I/O.
    std::array<uint64_t, 10> f{};
    bool complete = !d.name.empty();
    for (size_t i = 0; i < f.size() && complete; ++i) {
      std::optional<uint64_t> v = NextU64(&line);
      complete = v.has_value();
      if (complete) f[i] = *v;
    }
    if (!complete) continue;
    d.reads = f[0];
    d.read_sectors = f[2];
    d.writes = f[4];
    d.write_sectors = f[6];
    d.io_ms = f[9];
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<NetCounters> ParseNetDev(std::string_view proc_net_dev) {
  std::vector<NetCounters> out;
  std::string_view line;
  while (NextLine(&proc_net_dev, &line)) {
    // Data lines are "name: 8 receive counters, 8 transmit counters"; a wide counter can touch the colon.
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(0, colon));
    if (name.empty() || name == "lo") continue;
    line.remove_prefix(colon + 1);
    std::array<uint64_t, 9> f{};
    bool complete = true;
    for (size_t i = 0; i < f.size() && complete; ++i) {
      std::optional<uint64_t> v = NextU64(&line);
      complete = v.has_value();
      if (complete) f[i] = *v;
    }
    if (complete) out.push_back(NetCounters{std::string(name), f[0], f[8]});
  }
  return out;
}

DiskKind ClassifyDiskByName(std::string_view name) {
  for (std::string_view prefix : {"loop", "ram", "zram", "dm-", "md"}) {
    if (StartsWith(name, prefix)) return DiskKind::kVirtual;
  }
  if (!EndsWithDigit(name)) return DiskKind::kWhole;
  // "nvme0n1p2", "mmcblk0p1", "nbd0p1": a digit, 'p', then the partition number.
  size_t digits = name.find_last_not_of("0123456789");
  if (digits != std::string_view::npos && digits > 0 && name[digits] == 'p' && EndsWithDigit(name.substr(0, digits))) {
    return DiskKind::kPartition;
  }
  // "sda1", "vdb2", "xvda1", "hdc3": the whole disk's name is letters only.
  for (std::string_view prefix : {"sd", "hd", "vd", "xvd"}) {
    if (StartsWith(name, prefix)) return DiskKind::kPartition;
  }
  return DiskKind::kWhole;
}

HostSample ComputeHostSample(const HostCounters* prev, const HostCounters& cur, double interval_s) {
  HostSample out;
  bool rates = prev != nullptr && interval_s > 0;
  if (cur.cpu) FillCpu(rates && prev->cpu ? &*prev->cpu : nullptr, *cur.cpu, &out);
  if (cur.load) {
    out.load1 = cur.load->load1;
    out.load5 = cur.load->load5;
    out.load15 = cur.load->load15;
  }
  FillMemory(cur.mem, &out);
  if (rates) {
    FillDisks(prev->disks, cur.disks, interval_s, &out);
    FillNets(prev->nets, cur.nets, interval_s, &out);
  }
  return out;
}

HostReader::HostReader(ProcRoots roots)
    : roots_(std::move(roots)),
      stat_path_(roots_.proc + "/stat"),
      loadavg_path_(roots_.proc + "/loadavg"),
      meminfo_path_(roots_.proc + "/meminfo"),
      diskstats_path_(roots_.proc + "/diskstats"),
      netdev_path_(roots_.proc + "/net/dev"),
      have_sys_block_(PathExists(roots_.sys + "/block")) {}

HostCounters HostReader::Read() {
  HostCounters out;
  if (std::optional<std::string_view> text = reader_.Read(stat_path_)) out.cpu = ParseCpuStat(*text);
  if (std::optional<std::string_view> text = reader_.Read(loadavg_path_)) out.load = ParseLoadAvg(*text);
  if (std::optional<std::string_view> text = reader_.Read(meminfo_path_)) out.mem = ParseMemInfo(*text);
  if (std::optional<std::string_view> text = reader_.Read(diskstats_path_)) {
    out.disks = ParseDiskStats(*text);
    std::erase_if(out.disks, [this](const DiskCounters& d) { return !CountsAsDisk(d.name); });
  }
  if (std::optional<std::string_view> text = reader_.Read(netdev_path_)) out.nets = ParseNetDev(*text);
  return out;
}

bool HostReader::CountsAsDisk(const std::string& name) {
  auto it = disk_class_cache_.find(name);
  if (it != disk_class_cache_.end()) return it->second;
  bool counts;
  if (ClassifyDiskByName(name) == DiskKind::kVirtual) {
    counts = false;
  } else if (!have_sys_block_) {
    counts = ClassifyDiskByName(name) == DiskKind::kWhole;
  } else {
    std::string dir = roots_.sys + "/block/" + name;
    counts = PathExists(dir) && !DirHasEntries(dir + "/slaves");
  }
  disk_class_cache_.emplace(name, counts);
  return counts;
}

}  // namespace sat::telemetry
