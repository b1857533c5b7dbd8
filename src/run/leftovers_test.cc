#include "run/leftovers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include "run/process_tree.h"

namespace sat::run {
namespace {

// A process that carries `entry` in its environment and ignores SIGTERM (as a stuck training process may).
pid_t StartMarked(const std::string& entry) {
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGTERM, SIG_IGN);
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("60"), nullptr};
    char* const envp[] = {const_cast<char*>(entry.c_str()), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  return pid;
}

TEST(Leftovers, FindsAndStopsTheProcessesOfAnAttempt) {
  const std::string entry = "SATURATE_RUN_ID=4242-ab12cd-2";
  const pid_t mine = StartMarked(entry);
  const pid_t other = StartMarked("SATURATE_RUN_ID=4242-ab12cd-3");
  // Until exec the child's environment is ours; wait for it.
  for (int i = 0; i < 200 && !EnvironContains(mine, entry); ++i) usleep(10000);

  const std::vector<pid_t> found = FindMarkedProcesses({entry});
  ASSERT_EQ(found, std::vector<pid_t>{mine});
  EXPECT_EQ(StopProcesses(found, 0.2), 1);
  int status = 0;
  ASSERT_EQ(waitpid(mine, &status, 0), mine);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "SIGTERM was ignored, SIGKILL followed";
  // The other attempt's process is not touched.
  EXPECT_EQ(waitpid(other, &status, WNOHANG), 0);
  kill(other, SIGKILL);
  waitpid(other, &status, 0);
}

// What a killed probe left: its owner's pid is gone. A live probe's runs, and other ids, are left alone.
TEST(Leftovers, FindsTheOrphansOfADeadOwnerOnly) {
  // A pid that is certainly free: a child that has exited and been reaped.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string orphan_entry = "SATURATE_RUN_ID=probe-" + std::to_string(dead) + "-full";
  const pid_t orphan = StartMarked(orphan_entry);
  const pid_t owned = StartMarked("SATURATE_RUN_ID=probe-" + std::to_string(getpid()) + "-loader");
  const pid_t sweep_run = StartMarked("SATURATE_RUN_ID=" + std::to_string(dead) + "-ab12cd-1");
  for (int i = 0; i < 200 && !EnvironContains(orphan, orphan_entry); ++i) usleep(10000);
  for (int i = 0; i < 200 && !EnvironContains(sweep_run, "SATURATE_RUN_ID=" + std::to_string(dead) + "-ab12cd-1");
       ++i) {
    usleep(10000);
  }

  std::set<pid_t> owners;
  const std::vector<pid_t> found = FindOrphans("probe-", &owners);
  EXPECT_EQ(found, std::vector<pid_t>{orphan});
  EXPECT_EQ(owners, std::set<pid_t>{dead});
  for (pid_t pid : {orphan, owned, sweep_run}) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

}  // namespace
}  // namespace sat::run
