#include "run/interrupt.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace sat::run {
namespace {

// nohup: a SIGHUP ignored at start stays ignored, so closing the terminal does not stop an unattended sweep.
// In a forked child, so the handlers are installed there for the first time.
TEST(Interrupt, AnIgnoredHangupStaysIgnored) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGHUP, SIG_IGN);
    InstallInterruptHandlers();
    raise(SIGHUP);
    const bool hup_counted = Interrupted();
    raise(SIGTERM);
    _exit(hup_counted ? 1 : InterruptSignal() == SIGTERM ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: SIGHUP was handled; 2: SIGTERM was not";
}

TEST(Interrupt, SignalsSetTheFlagAndCountAgain) {
  InstallInterruptHandlers();
  InstallInterruptHandlers();  // idempotent
  ClearInterrupt();
  EXPECT_FALSE(Interrupted());
  ASSERT_EQ(raise(SIGINT), 0);  // would kill the test binary without the handler
  EXPECT_TRUE(Interrupted());
  EXPECT_EQ(InterruptSignal(), SIGINT);
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(InterruptCount(), 2);
  EXPECT_EQ(InterruptSignal(), SIGINT);  // the first one is kept
  ASSERT_EQ(raise(SIGHUP), 0);
  EXPECT_EQ(InterruptCount(), 3);
  ClearInterrupt();
  EXPECT_FALSE(Interrupted());
  EXPECT_EQ(InterruptSignal(), 0);
}

}  // namespace
}  // namespace sat::run
