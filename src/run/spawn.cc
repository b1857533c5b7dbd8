#include "run/spawn.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "run/environment.h"
#include "util/strings.h"

namespace sat::run {
namespace {

// What the child reports over the error pipe before it gives up.
struct ChildFailure {
  enum Stage : int { kChdir, kExec } stage;
  int error;
};

std::string ErrnoText(int err) { return strerrordesc_np(err) ? strerrordesc_np(err) : fmt::format("errno {}", err); }

// NULL-terminated char* views of `strings`, which must outlive the result.
std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// On failure *err is the errno.
Status MakePipe(UniqueFd& read_end, UniqueFd& write_end, int* err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *err = errno;
    return Error{fmt::format("cannot create a pipe: {}", ErrnoText(*err))};
  }
  read_end.Reset(fds[0]);
  write_end.Reset(fds[1]);
  return Status::Ok();
}

// Makes `from` available as `to` across exec (dup2 is a no-op when they are equal, keeping close-on-exec).
void MoveFd(int from, int to) {
  if (from == to) {
    fcntl(to, F_SETFD, 0);
  } else {
    dup2(from, to);
  }
}

// Runs in the forked child: only async-signal-safe calls, and never returns.
[[noreturn]] void ExecChild(pid_t parent, const char* path, char* const* argv, char* const* envp, const char* cwd,
                            int stdin_fd, int stdout_fd, int stderr_fd, int report_fd, int cgroup_procs_fd) {
  // A run starts clean whatever saturate did to its own signals (an ignored SIGINT from nohup or a
  // background shell would otherwise be inherited and defeat the stop ladder).
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  setpgid(0, 0);
  // Into the run's cgroup before exec, so every process the command starts is born inside it.
  if (cgroup_procs_fd >= 0) {
    ssize_t moved = write(cgroup_procs_fd, "0", 1);
    (void)moved;
  }
  // Die with the supervising thread; if it is already gone, the parent check catches the race.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);

  MoveFd(stdin_fd, STDIN_FILENO);
  MoveFd(stdout_fd, STDOUT_FILENO);
  MoveFd(stderr_fd, STDERR_FILENO);

  ChildFailure failure{ChildFailure::kExec, 0};
  if (cwd != nullptr && chdir(cwd) != 0) {
    failure = {ChildFailure::kChdir, errno};
  } else {
    execve(path, argv, envp);
    failure.error = errno;
  }
  ssize_t ignored = write(report_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

// Reads the child's failure report; nullopt when exec succeeded (the pipe closed empty).
std::optional<ChildFailure> ReadFailure(int fd) {
  ChildFailure failure;
  ssize_t n;
  do {
    n = read(fd, &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof failure)) return failure;
  return std::nullopt;
}

}  // namespace

Result<std::string> ResolveProgram(const std::string& program, const std::string& path_var) {
  if (program.empty()) return Error{"cannot run an empty program name"};
  if (program.find('/') != std::string::npos) return program;
  bool found_unexecutable = false;
  for (const std::string& dir : Split(path_var, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    found_unexecutable = true;
  }
  if (found_unexecutable) return Error{fmt::format("cannot run '{}': {}", program, ErrnoText(EACCES))};
  return Error{fmt::format("cannot run '{}': {} (searched PATH)", program, ErrnoText(ENOENT))};
}

bool IsTransientStartError(int err) { return err == EAGAIN || err == EMFILE || err == ENFILE || err == ENOMEM; }

Result<SpawnedChild> Spawn(const SpawnRequest& request, bool* transient) {
  int err = 0;
  if (transient != nullptr) *transient = false;
  // Every failure below that is for want of a resource (a process, a descriptor, memory) may pass.
  auto failed = [&](Error e) -> Result<SpawnedChild> {
    if (transient != nullptr) *transient = IsTransientStartError(err);
    return e;
  };
  if (request.argv.empty()) return Error{"cannot run an empty command"};
  const std::string& program = request.argv[0];
  auto path = ResolveProgram(program, LookupVar(request.env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
  if (!path) return path.error();

  // Everything the child touches is prepared now; after fork only async-signal-safe calls are allowed.
  std::vector<char*> argv = CStrings(request.argv);
  std::vector<char*> envp = CStrings(request.env);
  const char* cwd = request.cwd.empty() ? nullptr : request.cwd.c_str();
  UniqueFd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!devnull.valid()) {
    err = errno;
    return failed(Error{fmt::format("cannot open /dev/null: {}", ErrnoText(err))});
  }
  UniqueFd out_r, out_w, err_r, err_w, report_r, report_w;
  for (Status s : {MakePipe(out_r, out_w, &err), MakePipe(err_r, err_w, &err), MakePipe(report_r, report_w, &err)}) {
    if (!s) return failed(s.error());
  }

  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    err = errno;
    return failed(Error{fmt::format("cannot start '{}': fork failed: {}", program, ErrnoText(err))});
  }
  if (pid == 0) {
    ExecChild(parent, path->c_str(), argv.data(), envp.data(), cwd, devnull.get(), out_w.get(), err_w.get(),
              report_w.get(), request.cgroup_procs_fd);
  }
  // Also set the group here: whichever of parent and child runs first, the group exists before we signal it.
  setpgid(pid, pid);
  report_w.Reset();
  out_w.Reset();
  err_w.Reset();

  if (auto failure = ReadFailure(report_r.get())) {
    waitpid(pid, nullptr, 0);
    err = failure->error;
    if (failure->stage == ChildFailure::kChdir) {
      return Error{fmt::format("cannot start '{}': cannot change directory to '{}': {}", program, request.cwd,
                               ErrnoText(failure->error))};
    }
    return failed(Error{fmt::format("cannot run '{}': {}", program, ErrnoText(failure->error))});
  }
  for (const UniqueFd* fd : {&out_r, &err_r}) fcntl(fd->get(), F_SETFL, fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  return SpawnedChild{pid, std::move(out_r), std::move(err_r)};
}

}  // namespace sat::run
