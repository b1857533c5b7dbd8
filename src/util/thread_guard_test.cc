#include "util/thread_guard.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace sat {
namespace {

TEST(GuardThreadDeathTest, AnExceptionInAThreadEndsSaturateWithOneLineAndExitOne) {
  unsetenv("SATURATE_ABORT_ON_INTERNAL_ERROR");
  EXPECT_EXIT(
      {
        std::thread t([] { GuardThread("sampler", [] { throw std::runtime_error("boom"); }); });
        t.join();
      },
      ::testing::ExitedWithCode(1), "saturate: internal error in the sampler thread \\(please report it\\): boom");
  EXPECT_EXIT(GuardThread("server", [] { throw 42; }), ::testing::ExitedWithCode(1),
              "internal error in the server thread \\(please report it\\): an unknown exception");
}

TEST(GuardThreadDeathTest, UnderTheTestSuiteItAborts) {
  EXPECT_DEATH(
      {
        setenv("SATURATE_ABORT_ON_INTERNAL_ERROR", "1", 1);
        GuardThread("sampler", [] { throw std::runtime_error("boom"); });
      },
      "internal error in the sampler thread");
}

TEST(GuardThread, ABodyThatReturnsIsLeftAlone) {
  int ran = 0;
  GuardThread("x", [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace sat
