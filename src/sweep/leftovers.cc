#include "sweep/leftovers.h"

#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "run/process_tree.h"
#include "telemetry/sampler.h"

namespace sat::sweep {
namespace {

// How long a killed process may take to leave /proc before we stop waiting for it.
constexpr double kGoneLimitS = 5;

bool AnyAlive(const std::vector<run::ProcEntry>& procs) {
  for (const run::ProcEntry& p : procs) {
    if (run::SameProcessRunning(p.pid, p.start_ticks)) return true;
  }
  return false;
}

void WaitGone(const std::vector<run::ProcEntry>& procs, double limit_s) {
  const double deadline = telemetry::MonotonicSeconds() + limit_s;
  while (AnyAlive(procs) && telemetry::MonotonicSeconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::string RunIdEntry(const AttemptRecord& attempt) {
  return fmt::format("SATURATE_RUN_ID={}-{}-{}", attempt.owner_pid, attempt.run_key, attempt.attempt_no);
}

std::vector<pid_t> FindMarkedProcesses(const std::vector<std::string>& entries, const std::string& proc_root) {
  std::vector<pid_t> found;
  if (entries.empty()) return found;
  for (const run::ProcEntry& p : run::ListProcesses(proc_root)) {
    if (p.zombie()) continue;
    for (const std::string& entry : entries) {
      if (run::EnvironContains(p.pid, entry, proc_root)) {
        found.push_back(p.pid);
        break;
      }
    }
  }
  return found;
}

int StopProcesses(const std::vector<pid_t>& pids, double grace_s) {
  // Start ticks pin each pid, so a pid reused meanwhile is never signalled.
  std::vector<run::ProcEntry> procs;
  for (pid_t pid : pids) {
    if (auto e = run::ReadProcEntry(pid); e && !e->zombie()) procs.push_back(*e);
  }
  for (const run::ProcEntry& p : procs) kill(p.pid, SIGTERM);
  WaitGone(procs, grace_s);
  for (const run::ProcEntry& p : procs) {
    if (run::SameProcessRunning(p.pid, p.start_ticks)) kill(p.pid, SIGKILL);
  }
  WaitGone(procs, kGoneLimitS);
  return static_cast<int>(procs.size());
}

}  // namespace sat::sweep
