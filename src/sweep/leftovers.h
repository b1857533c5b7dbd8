// Processes of a sweep's runs left behind by a controller that died (kill -9, a crash, a lost terminal).
// PR_SET_PDEATHSIG takes down each run's direct child with its controller, but not what that child started: a
// `--shell` pipeline's python, launcher ranks, a double-forked helper. They keep GPU memory and would share the
// device with the run's next attempt. A resume stops them before it starts those runs again.
//
// They are found by the run id every process of an attempt inherits (SATURATE_RUN_ID, "<controller pid>-<run
// key>-<attempt number>", sweep/launch.h), read from /proc/PID/environ.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sweep/records.h"

namespace sat::sweep {

// The SATURATE_RUN_ID entry ("SATURATE_RUN_ID=...") the processes of `attempt` carry.
std::string RunIdEntry(const AttemptRecord& attempt);

// The live processes under `proc_root` whose environment holds any of `entries`, zombies left out.
std::vector<pid_t> FindMarkedProcesses(const std::vector<std::string>& entries, const std::string& proc_root = "/proc");

// SIGTERM to each of `pids`, then SIGKILL to those still there after `grace_s`; waits until they are gone (or a
// few seconds more). Returns how many were signalled.
int StopProcesses(const std::vector<pid_t>& pids, double grace_s);

}  // namespace sat::sweep
