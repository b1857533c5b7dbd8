// Processes of a run left behind by the saturate that started it, once that saturate died (kill -9, a crash, a
// lost terminal). PR_SET_PDEATHSIG takes down a run's direct child with its saturate, but not what that child
// started: DataLoader workers, a `--shell` pipeline's python, launcher ranks, a double-forked helper. They keep
// CPU, memory and GPU memory, and would share the machine with the next measurement.
//
// They are found by the run id every process of a run inherits (SATURATE_RUN_ID, measure/helper_env.h), read from
// /proc/PID/environ: a sweep's resume looks for its dead controller's attempts (sweep/leftovers.h), and probe and
// tune look for the runs of any probe or tune that is gone (FindOrphans, with their "probe-<pid>-" ids).
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sat::run {

// The live processes under `proc_root` whose environment holds any of `entries` ("NAME=value"), zombies left out.
std::vector<pid_t> FindMarkedProcesses(const std::vector<std::string>& entries, const std::string& proc_root = "/proc");

// Processes whose SATURATE_RUN_ID is `prefix` followed by the pid of the saturate that started them and a '-'
// ("probe-4242-full"), where no process with that pid is alive any more: what a killed saturate left running.
// Zombies left out; `owners` gets the dead saturates' pids.
std::vector<pid_t> FindOrphans(std::string_view prefix, std::set<pid_t>* owners, const std::string& proc_root = "/proc");

// SIGTERM to each of `pids`, then SIGKILL to those still there after `grace_s`; waits until they are gone (or a
// few seconds more). Returns how many were signalled.
int StopProcesses(const std::vector<pid_t>& pids, double grace_s);

}  // namespace sat::run
