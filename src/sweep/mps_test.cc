#include "sweep/mps.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "run/process_tree.h"
#include "util/test_dir.h"

namespace sat::sweep {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the test's duration.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string ReadFile(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

bool Alive(pid_t pid) {
  auto e = run::ReadProcEntry(pid);
  return e && !e->zombie();
}

// A stand-in for NVIDIA's control program, called the way saturate calls the real one: `-d` starts a daemon that
// lives until a `quit` arrives on a later call's stdin, with its pid in the pipe folder (as the real daemon keeps
// its control pipe there); every call is recorded in calls.log. A private TMPDIR keeps other folders out of view.
class MpsTest : public testing::Test {
 protected:
  void SetUp() override {
    bin_ = tmp_.File("bin");
    fs::create_directory(bin_);
    fs::create_directory(tmp_.File("tmp"));
    log_ = tmp_.File("calls.log");
    const std::string fake = bin_ + "/nvidia-cuda-mps-control";
    std::ofstream(fake) << "#!/bin/sh\n"
                        << "pipe=\"$CUDA_MPS_PIPE_DIRECTORY\"\n"
                        << "echo \"args=$* pipe=$pipe\" >> " << log_ << "\n"
                        << "if [ \"$1\" = -d ]; then\n"
                        << "  sh -c 'echo $$ > \"$1/daemon.pid.new\"; mv \"$1/daemon.pid.new\" \"$1/daemon.pid\"; "
                           "exec sleep 600' daemon \"$pipe\" </dev/null >/dev/null 2>&1 &\n"
                        << "  while [ ! -s \"$pipe/daemon.pid\" ]; do sleep 0.01; done\n"
                        << "  exit 0\n"
                        << "fi\n"
                        << "cat >> " << log_ << "\n"
                        << "[ -s \"$pipe/daemon.pid\" ] || exit 1\n"
                        << "kill \"$(cat \"$pipe/daemon.pid\")\"\n";
    chmod(fake.c_str(), 0755);
    path_.emplace("PATH", bin_ + ":" + (getenv("PATH") ? getenv("PATH") : ""));
    tmpdir_.emplace("TMPDIR", tmp_.File("tmp"));
  }

  void TearDown() override {
    // No daemon may outlive the test, whatever it checked.
    for (pid_t pid : daemons_) kill(pid, SIGKILL);
  }

  // The daemon started in an MPS folder, by the pid it wrote.
  pid_t DaemonOf(const std::string& folder) {
    const pid_t pid = static_cast<pid_t>(std::stol(ReadFile(folder + "/pipe/daemon.pid")));
    daemons_.push_back(pid);
    return pid;
  }

  std::vector<std::string> Folders() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(tmp_.File("tmp"))) out.push_back(e.path().string());
    return out;
  }

  TempDir tmp_;
  std::string bin_, log_;
  std::optional<ScopedEnv> path_, tmpdir_;
  std::vector<pid_t> daemons_;
};

TEST_F(MpsTest, StartsAPrivateDaemonAndQuitsIt) {
  std::string pipe_dir;
  pid_t daemon = 0;
  {
    auto mps = MpsDaemon::Start();
    ASSERT_TRUE(mps) << mps.error().message;
    pipe_dir = (*mps)->env().at("CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_TRUE(fs::is_directory(pipe_dir));
    EXPECT_TRUE(fs::is_directory((*mps)->env().at("CUDA_MPS_LOG_DIRECTORY")));
    EXPECT_TRUE((*mps)->notes().empty());
    daemon = DaemonOf(fs::path(pipe_dir).parent_path().string());
    EXPECT_TRUE(Alive(daemon));
  }
  EXPECT_EQ(ReadFile(log_), "args=-d pipe=" + pipe_dir + "\nargs= pipe=" + pipe_dir + "\nquit\n");
  EXPECT_FALSE(fs::exists(pipe_dir)) << "its folders are removed";
  for (int i = 0; i < 100 && Alive(daemon); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(Alive(daemon));
}

// The defect: after `kill -9` of saturate its daemon stayed, and the next `sweep --mps` started a second one.
TEST_F(MpsTest, QuitsTheDaemonOfASaturateKilledWithSigkill) {
  const pid_t killed = fork();
  ASSERT_GE(killed, 0);
  if (killed == 0) {
    auto mps = MpsDaemon::Start();
    if (!mps) _exit(1);
    raise(SIGKILL);  // as `kill -9`: no destructor runs
    _exit(2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(killed, &status, 0), killed);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the stand-in saturate exited " << status;
  ASSERT_EQ(Folders().size(), 1u);
  const std::string left = Folders().front();
  const pid_t orphan = DaemonOf(left);
  ASSERT_TRUE(Alive(orphan)) << "kill -9 leaves the daemon running";

  auto mps = MpsDaemon::Start();
  ASSERT_TRUE(mps) << mps.error().message;
  for (int i = 0; i < 100 && Alive(orphan); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(Alive(orphan)) << "the daemon the killed saturate left is quit";
  EXPECT_FALSE(fs::exists(left)) << "and its folder removed";
  ASSERT_EQ((*mps)->notes().size(), 1u);
  EXPECT_EQ((*mps)->notes()[0],
            fmt::format("quit the MPS daemon that saturate (pid {}) left running in {}", killed, left));
  EXPECT_NE(ReadFile(log_).find("args= pipe=" + left + "/pipe\nquit\n"), std::string::npos) << ReadFile(log_);
  const std::string mine = fs::path((*mps)->env().at("CUDA_MPS_PIPE_DIRECTORY")).parent_path().string();
  EXPECT_TRUE(Alive(DaemonOf(mine))) << "a new daemon serves this sweep";
}

TEST_F(MpsTest, LeavesTheDaemonsOfLiveProcessesAndOtherFoldersAlone) {
  auto first = MpsDaemon::Start();
  ASSERT_TRUE(first) << first.error().message;
  const std::string first_dir = fs::path((*first)->env().at("CUDA_MPS_PIPE_DIRECTORY")).parent_path().string();
  const pid_t first_daemon = DaemonOf(first_dir);
  // A folder by that name without an owner file (not one this saturate wrote), and one whose owner lives.
  fs::create_directories(tmp_.File("tmp/saturate-mps-foreign/pipe"));

  auto second = MpsDaemon::Start();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE((*second)->notes().empty());
  EXPECT_TRUE(Alive(first_daemon)) << "its saturate (this test) is alive";
  EXPECT_TRUE(fs::exists(first_dir));
  EXPECT_TRUE(fs::exists(tmp_.File("tmp/saturate-mps-foreign")));
  DaemonOf(fs::path((*second)->env().at("CUDA_MPS_PIPE_DIRECTORY")).parent_path().string());
}

TEST(MpsDaemon, NamesTheMissingProgram) {
  TempDir empty;
  ScopedEnv path("PATH", empty.File(""));
  auto mps = MpsDaemon::Start();
  ASSERT_FALSE(mps);
  EXPECT_NE(mps.error().message.find("--mps needs NVIDIA's nvidia-cuda-mps-control"), std::string::npos)
      << mps.error().message;
}

}  // namespace
}  // namespace sat::sweep
