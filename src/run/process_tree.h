// Which processes belong to a run, read from /proc.
//
// A run's tree is everything that must die with it: its root process, every member of its process group,
// every descendant of the root by parent links, and processes that escaped both (double fork, setsid) and were
// reparented to saturate, recognised by the marker variable the runner puts in the run's environment, plus
// their descendants. saturate is a child subreaper (see runner.h), so escapees land under saturate rather than
// init. A process that both leaves the group and clears its environment before its parent dies cannot be
// attributed; that is the documented limit.
//
// The /proc root is a parameter so tests can point it elsewhere. Functions are thread-safe (no shared state).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sat::run {

// Reads a whole small file (/proc, /sys, cgroupfs); nullopt when it cannot be opened or read (the process is gone
// or not ours).
std::optional<std::string> ReadSmallFile(const std::string& path);

// The fields of /proc/PID/stat the runner needs (parsed by telemetry::ParsePidStat).
struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  char state = '?';  // 'R', 'S', 'D', 'Z' (zombie: dead, waiting to be reaped), ...
  unsigned long long start_ticks = 0;  // start time in clock ticks since boot; tells a reused pid apart

  bool zombie() const { return state == 'Z' || state == 'X'; }
};

// nullopt when /proc/PID/stat cannot be read (the process is gone) or is not in the expected shape.
std::optional<ProcEntry> ReadProcEntry(pid_t pid, const std::string& proc_root = "/proc");

// Whether the process that had `start_ticks` as pid `pid` still runs (not a zombie, and not a later process that
// reused the pid): how saturate tells whether the saturate that recorded a pid is still alive.
bool SameProcessRunning(pid_t pid, unsigned long long start_ticks, const std::string& proc_root = "/proc");

// Every process in proc_root; processes that exit during the scan are left out.
std::vector<ProcEntry> ListProcesses(const std::string& proc_root = "/proc");

// True when /proc/PID/environ contains exactly `entry` ("NAME=value"). False when unreadable (another user's
// process, a zombie, a process that exited).
bool EnvironContains(pid_t pid, std::string_view entry, const std::string& proc_root = "/proc");

struct TreeQuery {
  pid_t root = 0;    // the run's direct child; may already be gone
  pid_t pgid = 0;    // the run's process group; 0 to skip
  pid_t reaper = 0;  // saturate's pid: where escapees are reparented
  // Whether a process reparented to `reaper` carries the run's marker; called only for those processes.
  std::function<bool(pid_t)> is_marked;
};

// The run's tree among `procs` (zombies included, `reaper` itself never), in `procs` order.
std::vector<ProcEntry> FindRunTree(const std::vector<ProcEntry>& procs, const TreeQuery& query);

}  // namespace sat::run
