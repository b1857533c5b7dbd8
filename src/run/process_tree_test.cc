#include "run/process_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace sat::run {
namespace {

// A /proc/PID/stat line with the given identity fields; the rest are plausible zeros.
std::string StatLine(pid_t pid, std::string_view comm, char state, pid_t ppid, pid_t pgid, pid_t sid) {
  return std::to_string(pid) + " (" + std::string(comm) + ") " + state + " " + std::to_string(ppid) + " " +
         std::to_string(pgid) + " " + std::to_string(sid) +
         " 34816 0 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n";
}

ProcEntry Proc(pid_t pid, pid_t ppid, pid_t pgid, char state = 'S') {
  return ProcEntry{pid, ppid, pgid, pgid, state, 0};
}

std::vector<pid_t> Pids(const std::vector<ProcEntry>& procs) {
  std::vector<pid_t> out;
  for (const auto& p : procs) out.push_back(p.pid);
  return out;
}

TEST(ProcessTree, ReadsStatWithAwkwardCommandName) {
  auto root = std::filesystem::path(testing::TempDir()) / ("proc_awkward_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "4242");
  std::filesystem::create_directories(root / "12");
  std::filesystem::create_directories(root / "13");
  std::ofstream(root / "4242" / "stat") << StatLine(4242, "py thon) (x", 'Z', 17, 4200, 4100);
  std::ofstream(root / "12" / "stat") << "12 (truncated) S 1 2";
  std::ofstream(root / "13" / "stat") << "garbage";
  auto e = ReadProcEntry(4242, root.string());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->pid, 4242);
  EXPECT_EQ(e->ppid, 17);
  EXPECT_EQ(e->pgid, 4200);
  EXPECT_EQ(e->sid, 4100);
  EXPECT_TRUE(e->zombie());
  EXPECT_EQ(e->start_ticks, 987654u);
  EXPECT_FALSE(ReadProcEntry(12, root.string()).has_value());
  EXPECT_FALSE(ReadProcEntry(13, root.string()).has_value());
  std::filesystem::remove_all(root);
}

TEST(ProcessTree, SameProcessRunningNeedsTheStartTimeAndNoZombie) {
  auto root = std::filesystem::path(testing::TempDir()) / ("proc_same_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "4242");
  std::filesystem::create_directories(root / "4243");
  std::ofstream(root / "4242" / "stat") << StatLine(4242, "saturate", 'S', 1, 4242, 4242);
  std::ofstream(root / "4243" / "stat") << StatLine(4243, "saturate", 'Z', 1, 4243, 4243);
  EXPECT_TRUE(SameProcessRunning(4242, 987654u, root.string()));
  EXPECT_FALSE(SameProcessRunning(4242, 987655u, root.string()));  // the pid was reused
  EXPECT_FALSE(SameProcessRunning(4243, 987654u, root.string()));  // exited, not yet reaped
  EXPECT_FALSE(SameProcessRunning(4244, 987654u, root.string()));  // gone
  std::filesystem::remove_all(root);
  const auto self = ReadProcEntry(getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_TRUE(SameProcessRunning(getpid(), self->start_ticks));
}

TEST(ProcessTree, ReadsThisProcess) {
  auto self = ReadProcEntry(getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->ppid, getppid());
  EXPECT_EQ(self->pgid, getpgrp());
  auto all = ListProcesses();
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const ProcEntry& p) { return p.pid == getpid(); }));
}

TEST(ProcessTree, ReadsAFixtureRoot) {
  auto root = std::filesystem::path(testing::TempDir()) / ("proc_fixture_" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "77");
  std::filesystem::create_directories(root / "self");  // not a pid: skipped
  std::ofstream(root / "77" / "stat") << StatLine(77, "worker", 'S', 1, 77, 77);
  std::ofstream(root / "77" / "environ") << std::string("HOME=/root\0SATURATE_RUN_TREE=9.1\0", 33);
  auto procs = ListProcesses(root.string());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 77);
  EXPECT_TRUE(EnvironContains(77, "SATURATE_RUN_TREE=9.1", root.string()));
  EXPECT_FALSE(EnvironContains(77, "SATURATE_RUN_TREE=9.2", root.string()));
  EXPECT_FALSE(EnvironContains(78, "HOME=/root", root.string()));
  std::filesystem::remove_all(root);
}

TEST(ProcessTree, FindsGroupDescendantsAndMarkedEscapees) {
  const pid_t reaper = 100;
  std::vector<ProcEntry> procs = {
      Proc(1, 0, 1),
      Proc(100, 1, 100),       // saturate
      Proc(200, 100, 200),     // the run's root
      Proc(201, 200, 200),     // a worker in the group
      Proc(202, 200, 202),     // a child that called setsid
      Proc(203, 202, 202),     // ... and its child
      Proc(300, 100, 300),     // reparented escapee with our marker
      Proc(301, 300, 300),     // ... and its child
      Proc(400, 100, 400),     // another run's root (unmarked for us)
      Proc(401, 1, 200, 'Z'),  // a group member reparented elsewhere, now a zombie
      Proc(500, 1, 500),       // unrelated
  };
  TreeQuery q{200, 200, reaper, [](pid_t pid) { return pid == 300; }};
  EXPECT_EQ(Pids(FindRunTree(procs, q)), (std::vector<pid_t>{200, 201, 202, 203, 300, 301, 401}));

  // After the root is reaped, its children hang under the reaper; the group and marker still find them.
  std::vector<ProcEntry> later = {Proc(100, 1, 100), Proc(201, 100, 200), Proc(202, 100, 202),
                                  Proc(203, 202, 202)};
  TreeQuery q2{200, 200, reaper, [](pid_t pid) { return pid == 202; }};
  EXPECT_EQ(Pids(FindRunTree(later, q2)), (std::vector<pid_t>{201, 202, 203}));
}

TEST(ProcessTree, NeverIncludesTheReaper) {
  std::vector<ProcEntry> procs = {Proc(100, 1, 50), Proc(200, 100, 50)};
  TreeQuery q{200, 50, 100, nullptr};
  EXPECT_EQ(Pids(FindRunTree(procs, q)), (std::vector<pid_t>{200}));
}

}  // namespace
}  // namespace sat::run
