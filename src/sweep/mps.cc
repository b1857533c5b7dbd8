#include "sweep/mps.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "run/environment.h"
#include "run/spawn.h"

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

}  // namespace

Result<std::unique_ptr<MpsDaemon>> MpsDaemon::Start() {
  const char* path = getenv("PATH");
  auto program = run::ResolveProgram(kControl, path ? path : "/usr/bin:/bin");
  if (!program.ok()) {
    return Error{
        fmt::format("--mps needs NVIDIA's {} (from the driver utilities): {}", kControl, program.error().message)};
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "saturate-mps-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return Error{fmt::format("cannot create {}: {}", tmpl, std::strerror(errno))};
  std::map<std::string, std::string> env = {{"CUDA_MPS_PIPE_DIRECTORY", tmpl + "/pipe"},
                                            {"CUDA_MPS_LOG_DIRECTORY", tmpl + "/log"}};
  std::error_code ec;
  for (const auto& [name, dir] : env) std::filesystem::create_directories(dir, ec);
  auto status = RunControl(program.value(), {"-d"}, env, "");
  if (!status.ok() || status.value() != 0) {
    std::filesystem::remove_all(tmpl, ec);
    return Error{status.ok() ? fmt::format("{} -d exited with status {} (see its log in {})", kControl, status.value(),
                                           env["CUDA_MPS_LOG_DIRECTORY"])
                             : status.error().message};
  }
  return std::unique_ptr<MpsDaemon>(new MpsDaemon(program.value(), tmpl, std::move(env)));
}

MpsDaemon::MpsDaemon(std::string program, std::string dir, std::map<std::string, std::string> env)
    : program_(std::move(program)), dir_(std::move(dir)), env_(std::move(env)) {}

MpsDaemon::~MpsDaemon() {
  (void)RunControl(program_, {}, env_, "quit\n");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace sat::sweep
