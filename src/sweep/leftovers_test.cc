#include "sweep/leftovers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/process_tree.h"

namespace sat::sweep {
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
  AttemptRecord attempt;
  attempt.owner_pid = 4242;
  attempt.run_key = "ab12cd";
  attempt.attempt_no = 2;
  EXPECT_EQ(RunIdEntry(attempt), "SATURATE_RUN_ID=4242-ab12cd-2");

  const pid_t mine = StartMarked(RunIdEntry(attempt));
  attempt.attempt_no = 3;
  const pid_t other = StartMarked(RunIdEntry(attempt));
  attempt.attempt_no = 2;
  // Until exec the child's environment is ours; wait for it.
  for (int i = 0; i < 200 && !run::EnvironContains(mine, RunIdEntry(attempt)); ++i) usleep(10000);

  const std::vector<pid_t> found = FindMarkedProcesses({RunIdEntry(attempt)});
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

}  // namespace
}  // namespace sat::sweep
