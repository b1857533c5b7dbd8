// Starts one child process the way the runner needs it: its own process group, stdin from /dev/null,
// stdout and stderr into pipes, every signal disposition and the signal mask back to defaults, and
// PR_SET_PDEATHSIG(SIGKILL) so the child dies if the forking *thread* dies (the runner forks from the thread
// that supervises the run for its whole life, never from a caller's thread).
//
// Between fork and exec the child only makes async-signal-safe calls: the program path, argv and environment
// are prepared before fork. Exec and chdir failures travel back over a close-on-exec pipe as an errno, so the
// caller learns "No such file or directory" instead of seeing an exit code 127.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "util/unique_fd.h"
#include "util/result.h"

namespace sat::run {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up on the PATH of `env` unless it contains '/'
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  std::string cwd;                // empty: saturate's working directory
  int cgroup_procs_fd = -1;       // a cgroup's cgroup.procs open for writing: the child moves into it; -1: none
};

struct SpawnedChild {
  pid_t pid = 0;  // also the child's process group id
  UniqueFd stdout_read, stderr_read;  // non-blocking, close-on-exec read ends
};

// The path execve should run for `program`, searched like execvp does on `path_var` (':'-separated, an empty
// entry means the current directory). Error: "cannot run 'x': No such file or directory (searched PATH)", or EACCES.
Result<std::string> ResolveProgram(const std::string& program, const std::string& path_var);

// Whether a start that failed with errno `err` failed for want of a resource (EAGAIN from fork under
// RLIMIT_NPROC, EMFILE/ENFILE from pipe, ENOMEM): another try later may succeed.
bool IsTransientStartError(int err);

// Forks and execs. Error (with the reason, e.g. "cannot run 'pyhton': No such file or directory") when the
// program could not be started; in that case no child is left behind, and `*transient` (when given) says
// whether the reason was IsTransientStartError.
Result<SpawnedChild> Spawn(const SpawnRequest& request, bool* transient = nullptr);

}  // namespace sat::run
