// A cgroup v2 of a run's own: the one record of its processes that no double fork, setsid or cleared environment
// escapes (see process_tree.h for the other ways the runner finds a run's tree).
//
// Where it can, the runner makes <saturate's own cgroup>/saturate-<pid>.<n> for each run and the child moves itself
// into it before exec, so every process the run ever starts is born inside. Stopping reads cgroup.procs beside the
// process tree, and at SIGKILL writes cgroup.kill (Linux 5.14+), which reaches processes forked in the same instant.
//
// "Where it can": a cgroup v2 hierarchy is mounted (unified, or the hybrid layout's /sys/fs/cgroup/unified) and
// saturate may create a child of its own cgroup and move processes into it: root, or a cgroup delegated to the user
// (systemd's user@.service, `systemd-run --user --scope -p Delegate=yes`, a container with a writable cgroupfs).
// Elsewhere Create returns an error and the runner goes on without one, as before. SATURATE_CGROUP=off turns it off.
//
// Thread-safety: a RunCgroup is used by its run's supervisor thread only; the free functions are thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.h"
#include "util/result.h"

namespace sat::run {

// The cgroup v2 path of a process from its /proc/PID/cgroup text (the "0::/path" line); nullopt without one.
std::optional<std::string> ParseUnifiedCgroupPath(std::string_view proc_pid_cgroup);

// Where the cgroup v2 hierarchy is mounted, from /proc/self/mountinfo's text; nullopt when it is not mounted.
// The mount's own root is taken into account (a container that sees its cgroup as "/"), so
// mount point + path from /proc/self/cgroup is a directory.
std::optional<std::string> ParseCgroup2Mount(std::string_view mountinfo, std::string_view cgroup_path);

// This process's own cgroup v2 directory, read under proc_root; Error saying why there is none.
Result<std::string> OwnCgroupDir(const std::string& proc_root = "/proc");

class RunCgroup {
 public:
  // Makes `parent_dir`/`name` and opens its cgroup.procs for writing. Error (naming the folder and the reason)
  // when it cannot: the caller then runs without a cgroup.
  static Result<RunCgroup> Create(const std::string& parent_dir, const std::string& name);

  RunCgroup(RunCgroup&&) noexcept;
  RunCgroup& operator=(RunCgroup&&) noexcept;
  ~RunCgroup();  // Remove()

  // cgroup.procs, open for writing and close-on-exec: the child writes "0" to it between fork and exec.
  int procs_fd() const { return procs_.get(); }
  const std::string& dir() const { return dir_; }

  // The processes in the cgroup now (live ones; the kernel lists no zombies). Empty once it is gone.
  std::vector<pid_t> Members() const;
  // SIGKILL to every process in the cgroup through cgroup.kill; false where the kernel has none (then the caller's
  // per-process kill is all there is).
  bool KillAll() const;
  // Removes the cgroup's folder (once no process is left in it); later calls do nothing.
  void Remove();

 private:
  RunCgroup(std::string dir, UniqueFd procs) : dir_(std::move(dir)), procs_(std::move(procs)) {}
  std::string dir_;
  UniqueFd procs_;
};

// Removes the empty run cgroups (saturate-<pid>.<n>) under `parent_dir` whose saturate is gone: a saturate killed
// with SIGKILL leaves its runs' folders behind. One whose processes live on stays. Returns how many were removed.
int RemoveStaleRunCgroups(const std::string& parent_dir);

// The cgroup for a run named `name` under this process's own cgroup, unless SATURATE_CGROUP=off or none can be made.
// The first call in a process also removes stale run cgroups there (RemoveStaleRunCgroups).
std::optional<RunCgroup> MakeRunCgroup(const std::string& name);

// Why a run of this process wanted a cgroup and got none (the first such reason), for the one line that says so at
// the end: without one, a process that leaves its run's process group and clears its environment outlives the run
// unseen. nullopt when every run had one, none was made, or SATURATE_CGROUP=off asked for none. Thread-safe.
std::optional<std::string> RunCgroupsMissing();

}  // namespace sat::run
