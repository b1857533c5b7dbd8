// A process and its descendants (a trainer and its DataLoader workers) from /proc/<pid>: reading per-process
// counters, and the pure arithmetic that turns two readings into a ProcTreeSample.
//
// Membership: the root, every process whose parent is a member, and every process that was a member at the
// previous reading and is still running (so DataLoader workers orphaned by a crashed trainer are still watched
// until they exit). Zombies are not members: they hold no memory and use no CPU.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "telemetry/procfs.h"
#include "telemetry/sample.h"

namespace sat::telemetry {

// The fields of /proc/<pid>/stat that saturate uses.
struct PidStat {
  pid_t pid = 0, ppid = 0, pgid = 0, sid = 0;
  std::string_view comm;                      // points into the parsed text; may contain spaces and parentheses
  char state = '?';                           // 'R', 'S', 'D', 'Z' (zombie), ...
  uint64_t utime_ticks = 0, stime_ticks = 0;  // clock ticks (sysconf(_SC_CLK_TCK))
  unsigned num_threads = 0;
  uint64_t start_ticks = 0;  // start time, clock ticks after boot
  uint64_t rss_pages = 0;
};

// Parses /proc/<pid>/stat. The command name is everything between the first '(' and the LAST ')', because the
// name itself may contain ") (" and spaces. nullopt when the text is not in that shape.
std::optional<PidStat> ParsePidStat(std::string_view text);

struct PidIo {
  uint64_t read_bytes = 0, write_bytes = 0;  // bytes the process caused to be fetched from / sent to storage
  // Bytes passed to read()-like calls, from storage, the page cache, pipes or sockets alike; 0 where the kernel's
  // io file has no rchar line.
  uint64_t rchar = 0;
};
std::optional<PidIo> ParsePidIo(std::string_view text);

// Seconds since boot, the first field of /proc/uptime.
std::optional<double> ParseUptime(std::string_view text);

// One member of the tree at one reading.
struct ProcCounters {
  pid_t pid = 0, ppid = 0;
  uint64_t start_ticks = 0;  // with pid, identifies the process across readings (pids are reused)
  uint64_t cpu_ticks = 0;    // utime + stime
  uint64_t sys_ticks = 0;    // stime: in the kernel on the process's behalf (system calls, page faults)
  unsigned threads = 0;
  uint64_t rss_bytes = 0;
  char state = '?';         // /proc/<pid>/stat's state: 'R' running, 'S' sleeping, 'D' waiting in the kernel, ...
  std::optional<PidIo> io;  // nullopt when /proc/<pid>/io cannot be read (another user's process)
  std::string cmdline;      // /proc/<pid>/cmdline: argv, each word ending in '\0'; empty when unreadable
};

struct TreeCounters {
  pid_t root = 0;
  std::optional<double> uptime_s;   // seconds since boot when the reading started
  std::vector<ProcCounters> procs;  // the members, ascending pid
};

// DataLoader workers among a tree's processes: members forked from a Python process of the tree without starting a
// new program, so their command line is their parent's word for word; that is how multiprocessing's fork (Linux's
// default) and forkserver start methods make them. A parent is Python when its argv[0] is named python* or pypy*.
// Wrappers (sh -c, torchrun's agent, accelerate launch) exec their children, so neither they nor the trainers they
// start count, however many there are. Limits: workers of the spawn start method are fresh interpreters and are not
// counted; other processes a trainer forks without exec (its own multiprocessing.Pool) are. `trainers` are left
// out: ranks a launcher started by fork (torch.multiprocessing's fork start method) are forked copies too.
unsigned CountForkedWorkers(const std::vector<ProcCounters>& procs, const std::vector<pid_t>& trainers = {});

// The members (see the file comment) given every live process as (pid, ppid) and the previous members.
// Returns them root first, then ascending pid. `live` may be in any order.
std::vector<pid_t> TreeMembers(pid_t root, const std::vector<std::pair<pid_t, pid_t>>& live,
                               const std::vector<pid_t>& previous_members);

// The tree over the interval between two readings of the same root. `prev` is nullptr (or of another root) for
// the first reading: then counts (worker_count by CountForkedWorkers) and RSS are filled and rates stay nullopt.
// When no member is left, alive is false and every measurement is nullopt.
//
// CPU and I/O rates sum, per member, the counter's growth over the interval:
//   - a process in both readings (same pid and start time) adds cur - prev;
//   - a process that started after the previous reading (start_ticks >= prev uptime) adds its whole counter,
//     all of which accrued within the interval;
//   - a process that existed before the previous reading but was not a member then adds nothing (no baseline);
//   - a process that exited during the interval adds nothing: what it used between the previous reading and its
//     exit is lost (at most one interval's worth per exiting process).
// blocked_count counts members in state 'D' at this reading: a process waiting in the kernel without taking signals,
// which is how a read from a disk, NFS or a FUSE file system waits (sleeping on a lock, a queue or a socket is 'S').
// Processes whose /proc/<pid>/io is unreadable add nothing to the I/O rates, which are nullopt when no member
// could be read. cpu_pct uses top's scale (100 = one core). rss_bytes sums resident sets, so pages shared
// between forked workers count once per process, as in top.
ProcTreeSample ComputeTreeSample(const TreeCounters* prev, const TreeCounters& cur, double interval_s,
                                 long ticks_per_s, const std::vector<pid_t>& trainers = {});

// The GPU memory the tree's processes hold: the sum of used_memory_bytes over every entry in the GPUs' process
// lists whose pid is in `pids`. nullopt when `gpus` is empty (no NVML), or when the tree's entries all lack a
// value; 0 when no entry belongs to the tree. NVML reports pids as the host sees them, so inside a container
// with its own pid namespace nothing matches.
std::optional<uint64_t> TreeGpuMemory(const std::vector<pid_t>& pids, const std::vector<GpuSample>& gpus);

// Reads TreeCounters for a root pid from <proc_root>. Finding descendants needs every process's parent; a
// process's parent is read once, when its pid first shows up in <proc_root>, and remembered while the pid stays
// listed (members themselves are re-read every time). So each reading costs one directory listing, one
// stat file per process new since the last reading, and stat, io and cmdline per member. This assumes that no pid is
// reused between two consecutive readings (pids are handed out in increasing order up to pid_max). A process
// adopted into the tree later (by a member that is a child subreaper) is not seen. Not thread-safe.
class ProcTreeReader {
 public:
  explicit ProcTreeReader(std::string proc_root);

  // Reading for `root`. Changing the root starts membership afresh.
  TreeCounters Read(pid_t root);
  // Forgets the members and the remembered parents, for a Read after a pause (pids may have been reused since).
  void Reset();

 private:
  struct Known {
    pid_t ppid = 0;
    uint64_t listing = 0;  // the listing that last saw this pid
  };

  void ListProcesses();
  std::optional<PidStat> ReadStat(pid_t pid);
  std::optional<PidIo> ReadIo(pid_t pid);
  const std::string& PidPath(pid_t pid, const char* file);

  std::string proc_root_, uptime_path_, path_;
  long page_size_;
  pid_t root_ = 0;
  std::vector<pid_t> members_;
  uint64_t listing_ = 0;
  std::unordered_map<pid_t, Known> known_;
  std::vector<std::pair<pid_t, pid_t>> live_;  // (pid, ppid) of the last listing
  FileReader reader_;
};

}  // namespace sat::telemetry
