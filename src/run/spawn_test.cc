#include "run/spawn.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "run/environment.h"

namespace sat::run {
namespace {

TEST(Spawn, ResolvesLikeExecvp) {
  EXPECT_EQ(*ResolveProgram("sh", "/nonexistent::/bin"), "/bin/sh");
  EXPECT_EQ(*ResolveProgram("./local/tool", "/bin"), "./local/tool");
  auto missing = ResolveProgram("no-such-program-4711", "/bin:/usr/bin");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "cannot run 'no-such-program-4711': No such file or directory (searched PATH)");
  EXPECT_FALSE(ResolveProgram("", "/bin"));
}

TEST(Spawn, ReportsAFileThatIsNotExecutable) {
  auto dir = std::filesystem::path(testing::TempDir()) / ("spawn_noexec_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "script") << "#!/bin/sh\n";
  chmod((dir / "script").c_str(), 0644);
  auto r = ResolveProgram("script", dir.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "cannot run 'script': Permission denied");
  std::filesystem::remove_all(dir);
}

TEST(Spawn, ChildLeadsItsOwnGroupAndPipesCarryOutput) {
  auto child = Spawn({{"/bin/sh", "-c", "echo out; echo err >&2"}, CurrentEnvironment(), ""});
  ASSERT_TRUE(child) << child.error().message;
  EXPECT_EQ(getpgid(child->pid), child->pid);
  int status = 0;
  ASSERT_EQ(waitpid(child->pid, &status, 0), child->pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char buf[16] = {};
  EXPECT_EQ(read(child->stdout_read.get(), buf, sizeof buf), 4);
  EXPECT_STREQ(buf, "out\n");
}

TEST(Spawn, ExecFailureComesBackAsErrno) {
  auto dir = std::filesystem::path(testing::TempDir()) / ("spawn_badexec_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "garbage") << "\x7f\x01not an executable";
  chmod((dir / "garbage").c_str(), 0755);
  auto r = Spawn({{(dir / "garbage").string()}, CurrentEnvironment(), ""});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "cannot run '" + (dir / "garbage").string() + "': Exec format error");
  std::filesystem::remove_all(dir);

  auto bad_dir = Spawn({{"/bin/true"}, CurrentEnvironment(), "/no/such/dir"});
  ASSERT_FALSE(bad_dir);
  EXPECT_EQ(bad_dir.error().message,
            "cannot start '/bin/true': cannot change directory to '/no/such/dir': No such file or directory");
}

// Out of descriptors (as under a low `ulimit -n`, or with thousands of runs' pipes open): the start fails with
// the reason, and says it may pass, so a sweep retries it instead of failing the run for good.
TEST(Spawn, RunningOutOfDescriptorsIsTransient) {
  const int lowest_free = dup(0);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  struct rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  bool transient = false;
  auto r = Spawn({{"/bin/true"}, CurrentEnvironment(), ""}, &transient);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Too many open files"), std::string::npos) << r.error().message;
  EXPECT_TRUE(transient);

  auto missing = Spawn({{"/no/such/program"}, CurrentEnvironment(), ""}, &transient);
  ASSERT_FALSE(missing);
  EXPECT_FALSE(transient);
  EXPECT_TRUE(IsTransientStartError(EAGAIN));
  EXPECT_FALSE(IsTransientStartError(ENOENT));
}

}  // namespace
}  // namespace sat::run
