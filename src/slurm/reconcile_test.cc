#include "slurm/reconcile.h"

#include <gtest/gtest.h>

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

using Action = ReconcileDecision::Action;
using run::ExitClass;

NodeOutcome Outcome(ExitClass c, bool signalled = false) {
  NodeOutcome o;
  o.exit_class = c;
  o.exit_code = c == ExitClass::kFinished ? 0 : 1;
  o.detail = "detail";
  o.error_line = "ValueError: x";
  o.signalled = signalled;
  return o;
}

QueuedJob Queued(JobState s) { return QueuedJob{"41_0", "sat-x", s, "", "n1", ""}; }

JobInfo Info(JobState s) {
  JobInfo j;
  j.id = "41_0";
  j.state = s;
  j.nodes = "n1";
  return j;
}

InFlightView View() {
  InFlightView v;
  v.job_id = "41_0";
  v.started = true;
  return v;
}

TEST(SlurmReconcile, AFinishedOutcomeIsDoneWhateverSlurmSays) {
  InFlightView v = View();
  v.outcome = Outcome(ExitClass::kFinished);
  v.queued = Queued(JobState::kRunning);  // still completing
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_EQ(d.action, Action::kEnd);
  EXPECT_EQ(d.outcome.exit_class, ExitClass::kFinished);
}

TEST(SlurmReconcile, ARunsOwnFailureIsItsOutcomeWithItsErrorLine) {
  InFlightView v = View();
  v.outcome = Outcome(ExitClass::kFailed);
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_EQ(d.action, Action::kEnd);
  EXPECT_EQ(d.outcome.exit_class, ExitClass::kFailed);
  EXPECT_EQ(d.outcome.error_line, "ValueError: x");
  EXPECT_FALSE(d.oom);
}

TEST(SlurmReconcile, OutOfMemoryUnderASizedRequestIsNotTheRunsFault) {
  InFlightView v = View();
  v.outcome = Outcome(ExitClass::kGpuOom);
  v.sized = true;
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_TRUE(d.oom);
  EXPECT_TRUE(d.outcome.oom_while_packed);
  v.sized = false;  // the spec's own request: an ordinary failure
  EXPECT_FALSE(Reconcile(v, 10).outcome.oom_while_packed);
}

TEST(SlurmReconcile, WaitsWhileTheJobIsQueuedOrRunningAndForTheGrace) {
  InFlightView v = View();
  v.queued = Queued(JobState::kPending);
  EXPECT_EQ(Reconcile(v, 10).action, Action::kWait);
  v.queued = Queued(JobState::kRunning);
  EXPECT_EQ(Reconcile(v, 10).action, Action::kWait);
  v.queued.reset();
  v.gone_s = 3;
  EXPECT_EQ(Reconcile(v, 10).action, Action::kWait);
}

TEST(SlurmReconcile, SlurmsFinalStateDecidesWhenTheWrapperWasSignalled) {
  InFlightView v = View();
  v.outcome = Outcome(ExitClass::kStopped, /*signalled=*/true);
  v.gone_s = 11;
  v.info = Info(JobState::kTimeout);
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kTimedOut);
  v.info = Info(JobState::kPreempted);
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_EQ(d.outcome.exit_class, ExitClass::kStopped);
  EXPECT_NE(d.detail.find("was preempted on n1"), std::string::npos) << d.detail;
  v.info = Info(JobState::kCancelled);
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kFailed);
  v.cancelled_by_us = true;
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kStopped);
  // Slurm's record is enough: no grace to wait for once the outcome is there.
  v.gone_s = 0;
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kStopped);
  // While the job is still winding down in Slurm, wait for its final state.
  v.queued = Queued(JobState::kRunning);
  EXPECT_EQ(Reconcile(v, 10).action, Action::kWait);
}

TEST(SlurmReconcile, JobsThatEndedWithoutAnOutcome) {
  InFlightView v = View();
  v.gone_s = 11;
  v.info = Info(JobState::kNodeFail);
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kStopped);
  v.info = Info(JobState::kOutOfMemory);
  v.sized = true;
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_EQ(d.outcome.exit_class, ExitClass::kHostOom);
  EXPECT_TRUE(d.oom);
  EXPECT_TRUE(d.outcome.oom_while_packed);
  v.info = Info(JobState::kFailed);
  v.info->exit_code = 0;
  v.info->term_signal = 9;
  d = Reconcile(v, 10);
  EXPECT_EQ(d.outcome.exit_class, ExitClass::kFailed);
  EXPECT_EQ(d.outcome.term_signal, 9);
  EXPECT_NE(d.detail.find("without an outcome"), std::string::npos);
}

TEST(SlurmReconcile, ANodeThatNeverSawTheSweepFolderStopsTheSweep) {
  InFlightView v = View();
  v.started = false;
  v.gone_s = 11;
  v.info = Info(JobState::kFailed);
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_EQ(d.action, Action::kFolderInvisible);
  EXPECT_NE(d.detail.find("the compute nodes cannot see it"), std::string::npos) << d.detail;
}

TEST(SlurmReconcile, AJobCancelledBeforeItStartedIsQueuedAtOnce) {
  InFlightView v = View();
  v.started = false;
  v.cancelled_by_us = true;
  ReconcileDecision d = Reconcile(v, 10);
  EXPECT_EQ(d.action, Action::kEnd);
  EXPECT_EQ(d.outcome.exit_class, ExitClass::kStopped);
}

TEST(SlurmReconcile, AJobSlurmForgotThatNeverStartedIsSubmittedAgain) {
  InFlightView v = View();
  v.started = false;
  v.gone_s = 11;
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kStopped);
  v.started = true;
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kFailed);
  // After a long outage: the outcome file is all there is, and it counts.
  v.outcome = Outcome(ExitClass::kStopped, /*signalled=*/true);
  EXPECT_EQ(Reconcile(v, 10).outcome.exit_class, ExitClass::kStopped);
}

}  // namespace
}  // namespace sat::slurm
