#include "run/leftovers.h"

#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "run/process_tree.h"
#include "telemetry/sampler.h"
#include "util/strings.h"

namespace sat::run {
namespace {

// How long a killed process may take to leave /proc before we stop waiting for it.
constexpr double kGoneLimitS = 5;

bool AnyAlive(const std::vector<ProcEntry>& procs) {
  for (const ProcEntry& p : procs) {
    if (SameProcessRunning(p.pid, p.start_ticks)) return true;
  }
  return false;
}

void WaitGone(const std::vector<ProcEntry>& procs, double limit_s) {
  const double deadline = telemetry::MonotonicSeconds() + limit_s;
  while (AnyAlive(procs) && telemetry::MonotonicSeconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::vector<pid_t> FindMarkedProcesses(const std::vector<std::string>& entries, const std::string& proc_root) {
  std::vector<pid_t> found;
  if (entries.empty()) return found;
  for (const ProcEntry& p : ListProcesses(proc_root)) {
    if (p.zombie()) continue;
    for (const std::string& entry : entries) {
      if (EnvironContains(p.pid, entry, proc_root)) {
        found.push_back(p.pid);
        break;
      }
    }
  }
  return found;
}

std::vector<pid_t> FindOrphans(std::string_view prefix, std::set<pid_t>* owners, const std::string& proc_root) {
  std::vector<pid_t> found;
  const std::string key = "SATURATE_RUN_ID=";
  for (const ProcEntry& p : ListProcesses(proc_root)) {
    if (p.zombie()) continue;
    auto environ = ReadSmallFile(fmt::format("{}/{}/environ", proc_root, p.pid));
    if (!environ) continue;
    for (const std::string& var : Split(*environ, '\0')) {
      if (!StartsWith(var, key) || !StartsWith(std::string_view(var).substr(key.size()), prefix)) continue;
      const std::string_view rest = std::string_view(var).substr(key.size() + prefix.size());
      const auto owner = ParseInt(rest.substr(0, rest.find('-')));
      // A live owner is a probe or tune still measuring: its runs are its own.
      if (owner && *owner > 0 && rest.find('-') != std::string_view::npos &&
          !std::filesystem::exists(fmt::format("{}/{}", proc_root, *owner))) {
        found.push_back(p.pid);
        owners->insert(static_cast<pid_t>(*owner));
      }
      break;
    }
  }
  return found;
}

int StopProcesses(const std::vector<pid_t>& pids, double grace_s) {
  // Start ticks pin each pid, so a pid reused meanwhile is never signalled.
  std::vector<ProcEntry> procs;
  for (pid_t pid : pids) {
    if (auto e = ReadProcEntry(pid); e && !e->zombie()) procs.push_back(*e);
  }
  for (const ProcEntry& p : procs) kill(p.pid, SIGTERM);
  WaitGone(procs, grace_s);
  for (const ProcEntry& p : procs) {
    if (SameProcessRunning(p.pid, p.start_ticks)) kill(p.pid, SIGKILL);
  }
  WaitGone(procs, kGoneLimitS);
  return static_cast<int>(procs.size());
}

}  // namespace sat::run
