#include "sweep/controller_lock.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/test_dir.h"

namespace sat::sweep {
namespace {

TEST(ControllerLock, ASecondControllerIsRefusedNamingTheFirst) {
  TempDir dir;
  const std::string journal = dir.File("lr.journal");
  auto first = ControllerLock::Acquire(journal);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ((*first)->path(), std::filesystem::weakly_canonical(journal).string() + ".lock");

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

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether a child process (a real second controller) is refused the journal's lock.
bool AnotherProcessIsRefused(const std::string& journal) {
  const pid_t child = fork();
  if (child == 0) {
    auto second = ControllerLock::Acquire(journal);
    _exit(!second.ok() && second.error().message.find("is in use by") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// `ln -s precious.txt sweep.journal.lock` once made saturate truncate precious.txt.
TEST(ControllerLock, ALockFileThatIsASymlinkIsRefusedAndItsTargetUntouched) {
  TempDir dir;
  const std::string precious = dir.File("precious.txt");
  std::ofstream(precious) << "the user's data\n";
  const std::string journal = dir.File("sweep.journal");
  ASSERT_EQ(symlink("precious.txt", (journal + ".lock").c_str()), 0);

  auto lock = ControllerLock::Acquire(journal);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error().exit_code, kExitUsage);
  EXPECT_NE(lock.error().message.find("sweep.journal.lock is a symbolic link"), std::string::npos)
      << lock.error().message;
  EXPECT_EQ(Contents(precious), "the user's data\n");

  // A dangling link is not followed to create its target either.
  ASSERT_EQ(unlink((journal + ".lock").c_str()), 0);
  ASSERT_EQ(symlink("created-through-the-link", (journal + ".lock").c_str()), 0);
  EXPECT_FALSE(ControllerLock::Acquire(journal));
  EXPECT_FALSE(std::filesystem::exists(dir.File("created-through-the-link")));
}

TEST(ControllerLock, AFileAtTheLockNameThatSaturateDidNotWriteIsLeftAlone) {
  TempDir dir;
  const std::string journal = dir.File("j.journal");
  std::ofstream(journal + ".lock") << "notes the user keeps here\n";
  auto lock = ControllerLock::Acquire(journal);
  ASSERT_FALSE(lock);
  EXPECT_NE(lock.error().message.find("is not saturate's"), std::string::npos) << lock.error().message;
  EXPECT_EQ(Contents(journal + ".lock"), "notes the user keeps here\n");

  // A hard link to another file is that file too.
  const std::string other = dir.File("other.txt");
  std::ofstream(other) << "";
  const std::string journal2 = dir.File("k.journal");
  ASSERT_EQ(link(other.c_str(), (journal2 + ".lock").c_str()), 0);
  auto linked = ControllerLock::Acquire(journal2);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("hard links"), std::string::npos) << linked.error().message;
  EXPECT_EQ(Contents(other), "");

  // A holder line left by a controller that was killed is saturate's: the next one takes the lock.
  const std::string journal3 = dir.File("l.journal");
  std::ofstream(journal3 + ".lock") << "host h pid 1 since 1\n";
  auto taken = ControllerLock::Acquire(journal3);
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_NE(Contents(journal3 + ".lock").find(fmt::format("pid {} ", getpid())), std::string::npos);
}

// The lock was keyed by the path as typed: a symlink to the journal took a lock file of its own.
TEST(ControllerLock, TheSameJournalUnderAnotherNameTakesTheSameLock) {
  TempDir dir;
  ASSERT_TRUE(std::filesystem::create_directory(dir.File("real")));
  ASSERT_EQ(symlink("real", dir.File("alias").c_str()), 0);
  auto first = ControllerLock::Acquire(dir.File("real/s.journal"));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ((*first)->path(), ControllerLockPath(dir.File("alias/s.journal")));
  EXPECT_TRUE(AnotherProcessIsRefused(dir.File("alias/s.journal")));
  // Once the journal exists, a symlink to it is the same journal too.
  std::ofstream(dir.File("real/s.journal")) << "";
  ASSERT_EQ(symlink("real/s.journal", dir.File("link.journal").c_str()), 0);
  EXPECT_TRUE(AnotherProcessIsRefused(dir.File("link.journal")));
}

}  // namespace
}  // namespace sat::sweep
