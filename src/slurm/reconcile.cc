#include "slurm/reconcile.h"

#include <fmt/format.h>

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

using Action = ReconcileDecision::Action;

ReconcileDecision End(run::ExitClass c, std::string detail, int exit_code = -1, int term_signal = 0) {
  ReconcileDecision d;
  d.action = Action::kEnd;
  d.outcome.exit_class = c;
  d.outcome.exit_code = exit_code;
  d.outcome.term_signal = term_signal;
  d.outcome.detail = detail;
  d.detail = std::move(detail);
  return d;
}

bool IsOom(run::ExitClass c) { return c == run::ExitClass::kGpuOom || c == run::ExitClass::kHostOom; }

ReconcileDecision FromOutcome(const NodeOutcome& o, bool sized) {
  ReconcileDecision d = End(o.exit_class, o.detail, o.exit_code, o.term_signal);
  d.outcome.error_line = o.error_line;
  d.outcome.start_transient = o.start_transient;
  d.oom = IsOom(o.exit_class);
  d.outcome.oom_while_packed = d.oom && sized;
  return d;
}

std::string On(const std::string& nodes) { return nodes.empty() ? "" : " on " + nodes; }

}  // namespace

ReconcileDecision Reconcile(const InFlightView& v, double grace_s) {
  if (v.outcome && (v.outcome->exit_class == run::ExitClass::kFinished || !v.outcome->signalled)) {
    return FromOutcome(*v.outcome, v.sized);
  }
  if (v.queued && JobActive(v.queued->state)) return ReconcileDecision{};
  const std::string job = fmt::format("Slurm job {}", v.job_id.empty() ? "(id unknown)" : v.job_id);
  if (v.cancelled_by_us && !v.started && !v.outcome) {
    return End(run::ExitClass::kStopped, job + " cancelled before it started");
  }
  // A file written on a network filesystem may show late; Slurm's record of a job that just left may too.
  if (v.gone_s < grace_s && !(v.outcome && v.info)) return ReconcileDecision{};

  if (!v.info) {
    if (v.outcome) return FromOutcome(*v.outcome, v.sized);
    if (!v.started) return End(run::ExitClass::kStopped, job + " is gone and never started");
    return End(run::ExitClass::kFailed, job + " ended without an outcome, and Slurm no longer knows why");
  }
  const JobInfo& info = *v.info;
  const std::string where = On(info.nodes);
  switch (info.state) {
    case JobState::kTimeout:
      return End(run::ExitClass::kTimedOut, fmt::format("{} reached its time limit{}", job, where));
    case JobState::kPreempted:
      return End(run::ExitClass::kStopped, fmt::format("{} was preempted{}", job, where));
    case JobState::kNodeFail:
      return End(run::ExitClass::kStopped, fmt::format("{} lost its node{}", job, where));
    case JobState::kOutOfMemory: {
      ReconcileDecision d = End(run::ExitClass::kHostOom,
                                fmt::format("{} ran out of its memory request{} (Slurm: OUT_OF_MEMORY)", job, where));
      d.oom = true;
      d.outcome.oom_while_packed = v.sized;
      return d;
    }
    case JobState::kCancelled:
      if (v.cancelled_by_us) return End(run::ExitClass::kStopped, job + " cancelled by saturate");
      return End(run::ExitClass::kFailed, fmt::format("{} was cancelled outside saturate{}", job, where), -1, 15);
    case JobState::kCompleted:
    case JobState::kFailed:
      if (v.outcome) return FromOutcome(*v.outcome, v.sized);
      if (!v.started) {
        ReconcileDecision d;
        d.action = Action::kFolderInvisible;
        d.detail = fmt::format(
            "{} ended ({}){} without reaching the sweep folder: the compute nodes cannot see it. Put the journal "
            "(--journal) on a filesystem the nodes share with this machine, and saturate itself where they can run it",
            job, JobStateName(info.state), where);
        return d;
      }
      return End(run::ExitClass::kFailed,
                 fmt::format("{} ended ({}){} without an outcome: the wrapper was killed", job,
                             JobStateName(info.state), where),
                 info.exit_code.value_or(-1), info.term_signal.value_or(0));
    default:
      if (JobActive(info.state)) return ReconcileDecision{};
      if (v.outcome) return FromOutcome(*v.outcome, v.sized);
      return End(run::ExitClass::kFailed, fmt::format("{} ended ({}){} without an outcome", job,
                                                      JobStateName(info.state), where));
  }
}

}  // namespace sat::slurm
