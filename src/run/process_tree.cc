#include "run/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include "util/strings.h"

namespace sat::run {
namespace {

// Reads a whole small /proc file; nullopt when it cannot be opened (the process is gone or not ours).
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

std::string PidPath(const std::string& proc_root, pid_t pid, const char* file) {
  return proc_root + "/" + std::to_string(pid) + "/" + file;
}

}  // namespace

std::optional<ProcEntry> ParseProcStat(std::string_view text) {
  // "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime
  //  cstime priority nice num_threads itrealvalue starttime ..."; comm is free text, so parse from its last ')'.
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string_view::npos) return std::nullopt;
  auto pid = ParseInt(Trim(text.substr(0, text.find('('))));
  std::vector<std::string> fields;
  for (const std::string& f : Split(Trim(text.substr(close_paren + 1)), ' ')) {
    if (!f.empty()) fields.push_back(f);
  }
  // After comm: state is field 0, ppid 1, pgrp 2, session 3, starttime 19.
  if (!pid || fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  auto ppid = ParseInt(fields[1]), pgid = ParseInt(fields[2]), sid = ParseInt(fields[3]);
  auto start = ParseInt(fields[19]);
  if (!ppid || !pgid || !sid || !start) return std::nullopt;
  ProcEntry e;
  e.pid = static_cast<pid_t>(*pid);
  e.state = fields[0][0];
  e.ppid = static_cast<pid_t>(*ppid);
  e.pgid = static_cast<pid_t>(*pgid);
  e.sid = static_cast<pid_t>(*sid);
  e.start_ticks = static_cast<unsigned long long>(*start);
  return e;
}

std::optional<ProcEntry> ReadProcEntry(pid_t pid, const std::string& proc_root) {
  auto text = ReadSmallFile(PidPath(proc_root, pid, "stat"));
  if (!text) return std::nullopt;
  return ParseProcStat(*text);
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
