#include "sweep/retry.h"

#include <gtest/gtest.h>

namespace sat::sweep {
namespace {

FailureFacts Failed(std::string line) { return FailureFacts{"failed", 0, false, std::move(line)}; }

TEST(RetryTest, TheSameErrorTwiceIsNotRetried) {
  auto why = SameFailureAgain(Failed("ValueError: bad"), 1, Failed("ValueError: bad"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "the same error as attempt 1 (failed: ValueError: bad): not retried");
}

TEST(RetryTest, ADifferentErrorKeepsItsRetry) {
  EXPECT_FALSE(SameFailureAgain(Failed("ValueError: bad"), 1, Failed("KeyError: 'x'")));
  FailureFacts oom{"host_oom", 0, false, "ValueError: bad"};
  EXPECT_FALSE(SameFailureAgain(Failed("ValueError: bad"), 1, oom));
}

TEST(RetryTest, CircumstantialFailuresKeepTheirRetries) {
  FailureFacts signal = Failed("Killed");
  signal.term_signal = 9;
  EXPECT_FALSE(SameFailureAgain(signal, 1, signal));
  FailureFacts packed{"gpu_oom", 0, true, "torch.cuda.OutOfMemoryError: CUDA out of memory."};
  EXPECT_FALSE(SameFailureAgain(packed, 1, packed));
  FailureFacts timeout{"timed_out", 0, false, "step 10"};
  EXPECT_FALSE(SameFailureAgain(timeout, 1, timeout));
  FailureFacts worker{"worker_killed", 0, false, "DataLoader worker (pid 1) is killed by signal"};
  EXPECT_FALSE(SameFailureAgain(worker, 1, worker));
  EXPECT_FALSE(SameFailureAgain(Failed(""), 1, Failed("")));
}

TEST(RetryTest, OutOfMemoryAloneOnItsDeviceRepeats) {
  FailureFacts alone{"gpu_oom", 0, false, "torch.cuda.OutOfMemoryError: CUDA out of memory."};
  EXPECT_TRUE(SameFailureAgain(alone, 2, alone));
}

TEST(RetryTest, LastErrorLinePrefersStderr) {
  EXPECT_EQ(LastErrorLine({"Traceback:", "  ValueError: bad  ", "  "}, {"loss=1"}), "ValueError: bad");
  EXPECT_EQ(LastErrorLine({}, {"loss=1", "fatal: no data"}), "fatal: no data");
  // A script's escape sequences are kept visible, not raw: the line reaches terminals and the journal.
  EXPECT_EQ(LastErrorLine({"\x1b[31mRuntimeError\x1b[0m: bad \xff"}, {}), "\\x1b[31mRuntimeError\\x1b[0m: bad \\xff");
  EXPECT_EQ(LastErrorLine({}, {}), "");
}

}  // namespace
}  // namespace sat::sweep

namespace sat::sweep {
namespace {

TEST(StateAfterOutcome, TransientStartFailuresHaveABoundOfTheirOwn) {
  AttemptOutcome busy;
  busy.exit_class = run::ExitClass::kStartFailed;
  busy.start_transient = true;
  const RetryPolicy none{0};
  EXPECT_FALSE(CountsAsFailure(busy)) << "the command is not at fault";
  EXPECT_EQ(StateAfterOutcome(busy, 0, none, 0), RunState::kRetrying) << "retries: 0 still retries a busy machine";
  EXPECT_EQ(StateAfterOutcome(busy, 0, none, none.transient_starts - 1), RunState::kRetrying);
  EXPECT_EQ(StateAfterOutcome(busy, 0, none, none.transient_starts), RunState::kFailed);
  AttemptOutcome missing;
  missing.exit_class = run::ExitClass::kStartFailed;
  EXPECT_EQ(StateAfterOutcome(missing, 0, RetryPolicy{5}, 0), RunState::kFailed) << "a missing program fails at once";
}

TEST(TransientStartDelay, GrowsWithJitterUpToACap) {
  EXPECT_DOUBLE_EQ(TransientStartDelay(1, 1.0), 0.25);
  EXPECT_DOUBLE_EQ(TransientStartDelay(2, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(TransientStartDelay(4, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(TransientStartDelay(20, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(TransientStartDelay(3, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(TransientStartDelay(3, 1.49), 1.49);
  EXPECT_DOUBLE_EQ(TransientStartDelay(3, 7.0), 1.5) << "jitter is clamped";
  EXPECT_DOUBLE_EQ(TransientStartDelay(0, 1.0), 0.25);
}

}  // namespace
}  // namespace sat::sweep
