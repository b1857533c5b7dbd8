#include "run/cgroup.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace sat::run {
namespace {

TEST(Cgroup, ParsesTheUnifiedLineOfProcPidCgroup) {
  EXPECT_EQ(ParseUnifiedCgroupPath("0::/user.slice/user-1000.slice/session-2.scope\n"),
            "/user.slice/user-1000.slice/session-2.scope");
  // The hybrid layout: v1 controllers first, the unified line last.
  EXPECT_EQ(ParseUnifiedCgroupPath("4:memory:/process_api/afc3\n1:cpu:/\n0::/\n"), "/");
  EXPECT_EQ(ParseUnifiedCgroupPath("4:memory:/a\n1:cpu:/\n"), std::nullopt);  // v1 only
  EXPECT_EQ(ParseUnifiedCgroupPath(""), std::nullopt);
}

TEST(Cgroup, FindsTheCgroup2MountInMountinfo) {
  const std::string unified =
      "22 28 0:20 / /sys rw,nosuid - sysfs sysfs rw\n"
      "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  EXPECT_EQ(ParseCgroup2Mount(unified, "/user.slice/a.scope"), "/sys/fs/cgroup/user.slice/a.scope");
  EXPECT_EQ(ParseCgroup2Mount(unified, "/"), "/sys/fs/cgroup");
  // Hybrid: v1 mounts (fstype "cgroup") are not it; no optional fields before the dash.
  const std::string hybrid =
      "40 39 0:35 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "41 39 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(ParseCgroup2Mount(hybrid, "/"), "/sys/fs/cgroup/unified");
  // A mount of a subtree (a container's view from the host's namespace) holds only paths under its root.
  const std::string subtree = "50 49 0:40 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n";
  EXPECT_EQ(ParseCgroup2Mount(subtree, "/docker/abc/x"), "/sys/fs/cgroup/x");
  EXPECT_EQ(ParseCgroup2Mount(subtree, "/docker/abc"), "/sys/fs/cgroup");
  EXPECT_EQ(ParseCgroup2Mount(subtree, "/docker/abcd"), std::nullopt);
  // Escaped characters in the mount point.
  EXPECT_EQ(ParseCgroup2Mount("51 1 0:41 / /mnt/my\\040cg rw - cgroup2 none rw\n", "/a"), "/mnt/my cg/a");
  EXPECT_EQ(ParseCgroup2Mount("22 28 0:20 / /sys rw - sysfs sysfs rw\n", "/"), std::nullopt);
  EXPECT_EQ(ParseCgroup2Mount("garbage\n- cgroup2\n", "/"), std::nullopt);
}

TEST(Cgroup, OwnCgroupDirSaysWhyWhenTheProcRootHasNone) {
  auto dir = OwnCgroupDir("/nonexistent-proc");
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("/nonexistent-proc/self/cgroup"), std::string::npos) << dir.error().message;
}

TEST(Cgroup, CreateNamesTheFolderWhenItCannot) {
  auto c = RunCgroup::Create("/nonexistent-cgroup-root", "x");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("/nonexistent-cgroup-root/x"), std::string::npos) << c.error().message;
}

// Starts `sleep 60` inside `cg` (moved in before exec, as the runner's child does); its pid, or -1.
pid_t SleepIn(const RunCgroup& cg) {
  const int fd = cg.procs_fd();
  pid_t child = fork();
  if (child == 0) {
    if (write(fd, "0", 1) != 1) _exit(3);
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  return child;
}

// A real cgroup under this test's own: a child moved in before exec is listed, cgroup.kill ends it, and the
// folder is removed once empty.
TEST(Cgroup, HoldsListsAndKillsARealProcess) {
  auto parent = OwnCgroupDir();
  if (!parent) GTEST_SKIP() << "no cgroup v2 here: " << parent.error().message;
  auto made = RunCgroup::Create(*parent, "saturate-test-" + std::to_string(getpid()));
  if (!made) GTEST_SKIP() << "saturate may not make cgroups here: " << made.error().message;
  RunCgroup cg = std::move(*made);
  const std::string dir = cg.dir();
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_TRUE(cg.Members().empty());

  pid_t child = SleepIn(cg);
  ASSERT_GT(child, 0);
  std::vector<pid_t> members;
  for (int i = 0; i < 200 && members.empty(); ++i) {
    members = cg.Members();
    if (members.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(members, std::vector<pid_t>{child});
  if (!cg.KillAll()) kill(child, SIGKILL);  // a kernel before 5.14 has no cgroup.kill
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(cg.Members().empty());
  cg.Remove();
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_TRUE(cg.Members().empty());
}

// The folders of a saturate killed with SIGKILL: empty ones go, a populated one and a live saturate's stay.
TEST(Cgroup, RemovesTheEmptyRunCgroupsOfASaturateThatIsGone) {
  auto parent = OwnCgroupDir();
  if (!parent) GTEST_SKIP() << "no cgroup v2 here: " << parent.error().message;
  auto probe = RunCgroup::Create(*parent, "saturate-test-stale-" + std::to_string(getpid()));
  if (!probe) GTEST_SKIP() << "saturate may not make cgroups here: " << probe.error().message;
  // A pid that is surely gone: a child reaped just now.
  pid_t gone = fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  RunCgroup dead_empty = std::move(*RunCgroup::Create(probe->dir(), fmt::format("saturate-{}.1", gone)));
  RunCgroup dead_busy = std::move(*RunCgroup::Create(probe->dir(), fmt::format("saturate-{}.2", gone)));
  RunCgroup alive = std::move(*RunCgroup::Create(probe->dir(), fmt::format("saturate-{}.1", getpid())));
  pid_t child = SleepIn(dead_busy);
  ASSERT_GT(child, 0);
  for (int i = 0; i < 200 && dead_busy.Members().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  EXPECT_EQ(RemoveStaleRunCgroups(probe->dir()), 1);
  EXPECT_FALSE(std::filesystem::exists(dead_empty.dir()));
  EXPECT_TRUE(std::filesystem::exists(dead_busy.dir()));
  EXPECT_TRUE(std::filesystem::exists(alive.dir()));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace sat::run

namespace sat::run {
namespace {

// A run that wanted a cgroup and got none is remembered, so that the command says so once at its end.
TEST(Cgroup, ARunWithoutACgroupIsRemembered) {
  unsetenv("SATURATE_CGROUP");
  EXPECT_FALSE(MakeRunCgroup("no-such-folder/run"));
  const std::optional<std::string> why = RunCgroupsMissing();
  ASSERT_TRUE(why);
  EXPECT_FALSE(why->empty());
}

}  // namespace
}  // namespace sat::run
