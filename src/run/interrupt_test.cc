#include "run/interrupt.h"

#include <gtest/gtest.h>

#include <csignal>

namespace sat::run {
namespace {

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
