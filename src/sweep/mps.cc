#include "sweep/mps.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "run/environment.h"
#include "run/process_tree.h"
#include "run/spawn.h"
#include "util/atomic_file.h"

namespace sat::sweep {
namespace {

constexpr const char* kControl = "nvidia-cuda-mps-control";

// Runs the control program with `args`, feeding `input` on its stdin; returns its exit status, or an error when
// it cannot be started.
Result<int> RunControl(const std::string& program, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env, const std::string& input) {
  std::vector<std::string> env_entries = run::BuildEnvironment(run::CurrentEnvironment(), env, {});
  std::vector<char*> envp;
  for (auto& e : env_entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = {program};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Error{fmt::format("cannot create a pipe: {}", std::strerror(errno))};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  if (rc != 0) {
    close(in[1]);
    return Error{fmt::format("cannot run {}: {}", program, std::strerror(rc))};
  }
  if (!input.empty() && write(in[1], input.data(), input.size()) < 0) {
    // The program may have exited without reading; its status tells.
  }
  close(in[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The environment that reaches the daemon in folder `dir`.
std::map<std::string, std::string> DaemonEnv(const std::string& dir) {
  return {{"CUDA_MPS_PIPE_DIRECTORY", dir + "/pipe"}, {"CUDA_MPS_LOG_DIRECTORY", dir + "/log"}};
}

// The `owner` file: "PID START_TICKS" of the saturate process that started the folder's daemon.
constexpr const char* kOwnerFile = "owner";
constexpr std::string_view kFolderPrefix = "saturate-mps-";

Status WriteOwner(const std::string& dir) {
  const pid_t self = getpid();
  auto entry = run::ReadProcEntry(self);
  if (!entry) return Error{fmt::format("cannot read /proc/{}/stat", self)};
  return WriteFileAtomically((std::filesystem::path(dir) / kOwnerFile).string(),
                             fmt::format("{} {}\n", self, entry->start_ticks));
}

// The owner's pid when the saturate process that started the daemon in `dir` is gone; nullopt while it lives, and
// for a folder that is not ours to judge (another user's, or one without a readable owner file).
std::optional<pid_t> DeadOwner(const std::filesystem::path& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) return std::nullopt;
  std::ifstream in(dir / kOwnerFile);
  pid_t pid = 0;
  unsigned long long start_ticks = 0;
  if (!(in >> pid >> start_ticks) || pid <= 0) return std::nullopt;
  if (run::SameProcessRunning(pid, start_ticks)) return std::nullopt;
  return pid;
}

// Quits the daemons in this user's saturate-mps-* folders under `tmp` whose owners are gone, and removes the
// folders; one note per folder.
std::vector<std::string> QuitOrphans(const std::string& program, const std::filesystem::path& tmp) {
  std::vector<std::string> notes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(tmp, ec)) {
    if (!entry.path().filename().string().starts_with(kFolderPrefix)) continue;
    std::optional<pid_t> owner = DeadOwner(entry.path());
    if (!owner) continue;
    const std::string dir = entry.path().string();
    auto quit = RunControl(program, {}, DaemonEnv(dir), "quit\n");
    std::filesystem::remove_all(entry.path(), ec);
    // A daemon that had already gone (a reboot keeps /tmp on some systems) has nothing to quit.
    if (quit.ok() && *quit == 0) {
      notes.push_back(fmt::format("quit the MPS daemon that saturate (pid {}) left running in {}", *owner, dir));
    }
  }
  return notes;
}

}  // namespace

Result<std::unique_ptr<MpsDaemon>> MpsDaemon::Start() {
  const char* path = getenv("PATH");
  auto program = run::ResolveProgram(kControl, path ? path : "/usr/bin:/bin");
  if (!program) {
    return Error{
        fmt::format("--mps needs NVIDIA's {} (from the driver utilities): {}", kControl, program.error().message)};
  }
  const std::filesystem::path tmp = std::filesystem::temp_directory_path();
  // A saturate killed with -9 could not quit its daemon: that daemon would hold the GPUs' MPS servers forever.
  std::vector<std::string> notes = QuitOrphans(*program, tmp);

  std::string dir = (tmp / (std::string(kFolderPrefix) + "XXXXXX")).string();
  if (!mkdtemp(dir.data())) return Error{fmt::format("cannot create {}: {}", dir, std::strerror(errno))};
  std::error_code ec;
  auto fail = [&](Error e) {
    std::filesystem::remove_all(dir, ec);
    return e;
  };
  // The owner goes in first, so a saturate killed from here on leaves a folder the next Start recognises.
  if (Status st = WriteOwner(dir); !st) return fail(st.error());
  const std::map<std::string, std::string> env = DaemonEnv(dir);
  for (const auto& [name, sub] : env) std::filesystem::create_directories(sub, ec);
  auto status = RunControl(*program, {"-d"}, env, "");
  if (!status) return fail(status.error());
  if (*status != 0) {
    return fail(Error{fmt::format("{} -d exited with status {} (see its log in {})", kControl, *status,
                                  env.at("CUDA_MPS_LOG_DIRECTORY"))});
  }
  return std::unique_ptr<MpsDaemon>(new MpsDaemon(*program, dir, std::move(notes)));
}

MpsDaemon::MpsDaemon(std::string program, std::string dir, std::vector<std::string> notes)
    : program_(std::move(program)), dir_(std::move(dir)), env_(DaemonEnv(dir_)), notes_(std::move(notes)) {}

MpsDaemon::~MpsDaemon() {
  (void)RunControl(program_, {}, env_, "quit\n");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace sat::sweep
