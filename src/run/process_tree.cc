#include "run/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include "telemetry/proc_tree.h"
#include "util/strings.h"

namespace sat::run {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

namespace {

std::string PidPath(const std::string& proc_root, pid_t pid, const char* file) {
  return proc_root + "/" + std::to_string(pid) + "/" + file;
}

}  // namespace

std::optional<ProcEntry> ReadProcEntry(pid_t pid, const std::string& proc_root) {
  auto text = ReadSmallFile(PidPath(proc_root, pid, "stat"));
  if (!text) return std::nullopt;
  std::optional<telemetry::PidStat> stat = telemetry::ParsePidStat(*text);
  if (!stat) return std::nullopt;
  return ProcEntry{stat->pid, stat->ppid, stat->pgid, stat->sid, stat->state, stat->start_ticks};
}

bool SameProcessRunning(pid_t pid, unsigned long long start_ticks, const std::string& proc_root) {
  auto entry = ReadProcEntry(pid, proc_root);
  return entry && !entry->zombie() && entry->start_ticks == start_ticks;
}

std::vector<ProcEntry> ListProcesses(const std::string& proc_root) {
  std::vector<ProcEntry> procs;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) return procs;
  while (dirent* d = readdir(dir)) {
    auto pid = ParseInt(d->d_name);
    if (!pid || *pid <= 0) continue;
    if (auto e = ReadProcEntry(static_cast<pid_t>(*pid), proc_root)) procs.push_back(*e);
  }
  closedir(dir);
  return procs;
}

bool EnvironContains(pid_t pid, std::string_view entry, const std::string& proc_root) {
  auto text = ReadSmallFile(PidPath(proc_root, pid, "environ"));
  if (!text) return false;
  for (const std::string& var : Split(*text, '\0')) {
    if (var == entry) return true;
  }
  return false;
}

std::vector<ProcEntry> FindRunTree(const std::vector<ProcEntry>& procs, const TreeQuery& query) {
  std::multimap<pid_t, pid_t> children;  // ppid -> pid
  for (const ProcEntry& p : procs) children.emplace(p.ppid, p.pid);

  // Seeds: the root, the group, and marked escapees under the reaper.
  std::vector<pid_t> pending;
  for (const ProcEntry& p : procs) {
    if (p.pid == query.reaper) continue;
    bool seed = p.pid == query.root || (query.pgid > 0 && p.pgid == query.pgid) ||
                (p.ppid == query.reaper && query.is_marked && query.is_marked(p.pid));
    if (seed) pending.push_back(p.pid);
  }
  // Then everything below a seed.
  std::set<pid_t> members;
  while (!pending.empty()) {
    pid_t pid = pending.back();
    pending.pop_back();
    if (pid == query.reaper || !members.insert(pid).second) continue;
    auto [begin, end] = children.equal_range(pid);
    for (auto it = begin; it != end; ++it) pending.push_back(it->second);
  }
  std::vector<ProcEntry> tree;
  for (const ProcEntry& p : procs) {
    if (members.count(p.pid)) tree.push_back(p);
  }
  return tree;
}

}  // namespace sat::run
