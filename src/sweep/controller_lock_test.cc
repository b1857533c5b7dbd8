#include "sweep/controller_lock.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep/test_dir.h"

namespace sat::sweep {
namespace {

TEST(ControllerLock, ASecondControllerIsRefusedNamingTheFirst) {
  TempDir dir;
  const std::string journal = dir.File("lr.journal");
  auto first = ControllerLock::Acquire(journal);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ((*first)->path(), journal + ".lock");

  // Another process (flock locks belong to open files, so a second open in this process would conflict too, but
  // a real second controller is another process).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto second = ControllerLock::Acquire(journal);
    const bool named = !second.ok() && second.error().exit_code == kExitUsage &&
                       second.error().message.find(fmt::format("saturate pid {} on host", getppid())) !=
                           std::string::npos &&
                       second.error().message.find("is in use by") != std::string::npos;
    _exit(named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  // Released with its holder: the next controller gets it.
  (*first).reset();
  EXPECT_TRUE(ControllerLock::Acquire(journal));
}

TEST(ControllerLock, AFolderThatCannotHoldTheLockFileIsAnError) {
  auto lock = ControllerLock::Acquire("/no/such/folder/x.journal");
  ASSERT_FALSE(lock);
  EXPECT_NE(lock.error().message.find("/no/such/folder/x.journal.lock"), std::string::npos);
}

}  // namespace
}  // namespace sat::sweep
