#include "telemetry/proc_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <unordered_set>

#include "util/strings.h"

namespace sat::telemetry {

std::optional<PidStat> ParsePidStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  std::optional<uint64_t> pid = ParseU64(Trim(text.substr(0, open)));
  if (!pid) return std::nullopt;
  PidStat s;
  s.pid = static_cast<pid_t>(*pid);
  s.comm = text.substr(open + 1, close - open - 1);
  std::string_view rest = text.substr(close + 1);
  std::string_view state = NextField(&rest);
  if (state.size() != 1) return std::nullopt;
  s.state = state[0];
  // Fields 4 (ppid) to 24 (rss) of proc(5); the ones not used may be negative (tty_nr, tpgid, nice).
  std::array<std::string_view, 21> fields;
  for (std::string_view& f : fields) {
    f = NextField(&rest);
    if (f.empty()) return std::nullopt;
  }
  auto number = [&fields](int field) { return ParseU64(fields[field - 4]); };
  std::optional<uint64_t> ppid = number(4), pgid = number(5), sid = number(6), utime = number(14), stime = number(15),
                          threads = number(20), start = number(22), rss = number(24);
  if (!ppid || !pgid || !sid || !utime || !stime || !threads || !start || !rss) return std::nullopt;
  s.ppid = static_cast<pid_t>(*ppid);
  s.pgid = static_cast<pid_t>(*pgid);
  s.sid = static_cast<pid_t>(*sid);
  s.utime_ticks = *utime;
  s.stime_ticks = *stime;
  s.num_threads = static_cast<unsigned>(*threads);
  s.start_ticks = *start;
  s.rss_pages = *rss;
  return s;
}

std::optional<PidIo> ParsePidIo(std::string_view text) {
  std::optional<uint64_t> read_bytes, write_bytes, rchar;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view key = NextField(&line);
    if (key == "read_bytes:") read_bytes = NextU64(&line);
    if (key == "write_bytes:") write_bytes = NextU64(&line);
    if (key == "rchar:") rchar = NextU64(&line);
  }
  if (!read_bytes || !write_bytes) return std::nullopt;
  return PidIo{*read_bytes, *write_bytes, rchar.value_or(0)};
}

std::optional<double> ParseUptime(std::string_view text) { return ParseF64(NextField(&text)); }

std::vector<pid_t> TreeMembers(pid_t root, const std::vector<std::pair<pid_t, pid_t>>& live,
                               const std::vector<pid_t>& previous_members) {
  std::unordered_multimap<pid_t, pid_t> children;
  std::unordered_set<pid_t> alive;
  for (auto [pid, ppid] : live) {
    children.emplace(ppid, pid);
    alive.insert(pid);
  }
  std::vector<pid_t> out, frontier;
  std::unordered_set<pid_t> seen;
  auto add = [&](pid_t pid) {
    if (alive.count(pid) && seen.insert(pid).second) {
      out.push_back(pid);
      frontier.push_back(pid);
    }
  };
  add(root);
  for (pid_t pid : previous_members) add(pid);
  while (!frontier.empty()) {
    pid_t parent = frontier.back();
    frontier.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) add(it->second);
  }
  std::sort(out.begin(), out.end(),
            [root](pid_t a, pid_t b) { return (a == root) != (b == root) ? a == root : a < b; });
  return out;
}

namespace {

// argv[0] of a NUL-separated command line names a Python interpreter ("/usr/bin/python3.11", "pypy3").
bool RunsPython(std::string_view cmdline) {
  std::string_view argv0 = cmdline.substr(0, cmdline.find('\0'));
  if (size_t slash = argv0.rfind('/'); slash != std::string_view::npos) argv0.remove_prefix(slash + 1);
  return StartsWith(argv0, "python") || StartsWith(argv0, "pypy");
}

}  // namespace

unsigned CountForkedWorkers(const std::vector<ProcCounters>& procs, const std::vector<pid_t>& trainers) {
  std::unordered_map<pid_t, std::string_view> cmdline_of;
  for (const ProcCounters& p : procs) cmdline_of[p.pid] = p.cmdline;
  unsigned workers = 0;
  for (const ProcCounters& p : procs) {
    auto parent = cmdline_of.find(p.ppid);
    if (parent == cmdline_of.end() || p.pid == p.ppid || p.cmdline.empty()) continue;
    if (std::find(trainers.begin(), trainers.end(), p.pid) != trainers.end()) continue;
    if (parent->second == p.cmdline && RunsPython(p.cmdline)) ++workers;
  }
  return workers;
}

ProcTreeSample ComputeTreeSample(const TreeCounters* prev, const TreeCounters& cur, double interval_s,
                                 long ticks_per_s, const std::vector<pid_t>& trainers) {
  ProcTreeSample out;
  out.root = cur.root;
  out.alive = !cur.procs.empty();
  if (!out.alive) return out;
  uint64_t rss = 0;
  for (const ProcCounters& p : cur.procs) {
    if (p.pid != cur.root) out.pids.push_back(p.pid);
    out.thread_count += p.threads;
    if (p.state == 'D') ++out.blocked_count;
    rss += p.rss_bytes;
  }
  if (out.pids.size() < cur.procs.size()) out.pids.insert(out.pids.begin(), cur.root);
  out.process_count = static_cast<unsigned>(cur.procs.size());
  out.worker_count = CountForkedWorkers(cur.procs, trainers);
  out.rss_bytes = rss;
  if (!prev || prev->root != cur.root || interval_s <= 0 || ticks_per_s <= 0) return out;

  // Ticks after boot at the previous reading: a process that started later has accrued everything within the
  // interval. Without an uptime, no process counts as new.
  std::optional<double> prev_ticks;
  if (prev->uptime_s) prev_ticks = *prev->uptime_s * static_cast<double>(ticks_per_s);
  uint64_t cpu_ticks = 0, sys_ticks = 0, read_bytes = 0, write_bytes = 0, rchar = 0;
  bool have_io = false;
  for (const ProcCounters& p : cur.procs) {
    auto q = std::lower_bound(prev->procs.begin(), prev->procs.end(), p.pid,
                              [](const ProcCounters& c, pid_t pid) { return c.pid < pid; });
    if (q != prev->procs.end() && q->pid == p.pid && q->start_ticks == p.start_ticks) {
      cpu_ticks += CounterDelta(p.cpu_ticks, q->cpu_ticks);
      sys_ticks += CounterDelta(p.sys_ticks, q->sys_ticks);
      if (p.io && q->io) {
        read_bytes += CounterDelta(p.io->read_bytes, q->io->read_bytes);
        write_bytes += CounterDelta(p.io->write_bytes, q->io->write_bytes);
        rchar += CounterDelta(p.io->rchar, q->io->rchar);
        have_io = true;
      }
    } else if (prev_ticks && static_cast<double>(p.start_ticks) >= *prev_ticks) {
      cpu_ticks += p.cpu_ticks;
      sys_ticks += p.sys_ticks;
      if (p.io) {
        read_bytes += p.io->read_bytes;
        write_bytes += p.io->write_bytes;
        rchar += p.io->rchar;
        have_io = true;
      }
    }
  }
  out.cpu_pct = static_cast<double>(cpu_ticks) / static_cast<double>(ticks_per_s) / interval_s * 100.0;
  out.sys_cpu_pct = static_cast<double>(sys_ticks) / static_cast<double>(ticks_per_s) / interval_s * 100.0;
  if (have_io) {
    out.read_bytes_per_s = static_cast<double>(read_bytes) / interval_s;
    out.write_bytes_per_s = static_cast<double>(write_bytes) / interval_s;
    out.rchar_per_s = static_cast<double>(rchar) / interval_s;
  }
  return out;
}

std::optional<uint64_t> TreeGpuMemory(const std::vector<pid_t>& pids, const std::vector<GpuSample>& gpus) {
  if (gpus.empty()) return std::nullopt;
  uint64_t sum = 0;
  bool matched = false, valued = false;
  for (const GpuSample& gpu : gpus) {
    for (const GpuProcess& p : gpu.processes) {
      if (std::find(pids.begin(), pids.end(), p.pid) == pids.end()) continue;
      matched = true;
      if (p.used_memory_bytes) {
        sum += *p.used_memory_bytes;
        valued = true;
      }
    }
  }
  if (matched && !valued) return std::nullopt;
  return sum;
}

ProcTreeReader::ProcTreeReader(std::string proc_root)
    : proc_root_(std::move(proc_root)), uptime_path_(proc_root_ + "/uptime"), page_size_(::sysconf(_SC_PAGESIZE)) {}

TreeCounters ProcTreeReader::Read(pid_t root) {
  if (root != root_) {
    root_ = root;
    members_.clear();
  }
  TreeCounters out;
  out.root = root;
  // Uptime before the listing: whatever starts after this instant belongs wholly to the next interval.
  if (std::optional<std::string_view> text = reader_.Read(uptime_path_)) out.uptime_s = ParseUptime(*text);
  ListProcesses();
  std::vector<pid_t> candidates = TreeMembers(root, live_, members_);
  std::sort(candidates.begin(), candidates.end());
  members_.clear();
  for (pid_t pid : candidates) {
    // A member that exited since the listing, or is a zombie, is no longer a member.
    std::optional<PidStat> st = ReadStat(pid);
    if (!st || st->state == 'Z' || st->state == 'X') continue;
    if (auto it = known_.find(pid); it != known_.end()) it->second.ppid = st->ppid;
    ProcCounters p;
    p.pid = pid;
    p.ppid = st->ppid;
    p.start_ticks = st->start_ticks;
    p.cpu_ticks = st->utime_ticks + st->stime_ticks;
    p.sys_ticks = st->stime_ticks;
    p.threads = st->num_threads;
    p.rss_bytes = st->rss_pages * static_cast<uint64_t>(page_size_);
    p.state = st->state;
    p.io = ReadIo(pid);
    if (std::optional<std::string_view> cmdline = reader_.Read(PidPath(pid, "cmdline"))) p.cmdline = *cmdline;
    out.procs.push_back(std::move(p));
    members_.push_back(pid);
  }
  return out;
}

void ProcTreeReader::Reset() {
  root_ = 0;
  members_.clear();
  known_.clear();
}

void ProcTreeReader::ListProcesses() {
  ++listing_;
  live_.clear();
  DIR* dir = ::opendir(proc_root_.c_str());
  if (!dir) return;
  while (dirent* e = ::readdir(dir)) {
    std::optional<uint64_t> id = ParseU64(e->d_name);
    if (!id) continue;
    pid_t pid = static_cast<pid_t>(*id);
    auto [it, inserted] = known_.try_emplace(pid);
    if (inserted) {
      std::optional<PidStat> st = ReadStat(pid);
      if (!st) {
        known_.erase(it);  // exited between the listing and the read
        continue;
      }
      it->second.ppid = st->ppid;
    }
    it->second.listing = listing_;
    live_.emplace_back(pid, it->second.ppid);
  }
  ::closedir(dir);
  std::erase_if(known_, [this](const auto& entry) { return entry.second.listing != listing_; });
}

std::optional<PidStat> ProcTreeReader::ReadStat(pid_t pid) {
  std::optional<std::string_view> text = reader_.Read(PidPath(pid, "stat"));
  if (!text) return std::nullopt;
  return ParsePidStat(*text);
}

std::optional<PidIo> ProcTreeReader::ReadIo(pid_t pid) {
  std::optional<std::string_view> text = reader_.Read(PidPath(pid, "io"));
  if (!text) return std::nullopt;
  return ParsePidIo(*text);
}

const std::string& ProcTreeReader::PidPath(pid_t pid, const char* file) {
  char digits[16];
  char* end = std::to_chars(digits, digits + sizeof(digits), pid).ptr;
  path_.assign(proc_root_).append("/").append(digits, end).append("/").append(file);
  return path_;
}

}  // namespace sat::telemetry
