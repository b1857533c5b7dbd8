// The retry rule: a failure that repeats exactly is not retried again. An attempt that fails with the same exit
// class and the same last error line as the previous attempt of its run would fail the same way a third time
// (a Python exception at the end of a script, a bad argument), so the run is marked failed at once and the
// attempt's detail says why. Failures that depend on circumstances keep their retries: out of memory while
// packed with other runs, death by a signal, a lost node, a timeout, a DataLoader worker killed, and any error
// that differs from the previous one.
//
// The run's state machine after an attempt (StateAfterAttempt, StateAfterOutcome): which ends count against the
// retry budget, and where the run goes next.
//
// Pure functions and plain data.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run/exit_class.h"
#include "sweep/records.h"

namespace sat::sweep {

// What the rule compares of one ended attempt.
struct FailureFacts {
  std::string exit_class;  // run::ExitClassName
  int term_signal = 0;     // the signal that killed the command; 0 when it exited
  bool oom_while_packed = false;
  std::string error_line;  // the last line the command printed to stderr (else stdout); may be empty
};

// The line that identifies a failure: the last non-blank line of stderr, else of stdout, trimmed, its control
// bytes made visible (util/utf8.h VisibleText: a script's escape sequences never reach a terminal through it);
// empty when the command printed nothing.
std::string LastErrorLine(const std::vector<std::string>& stderr_tail, const std::vector<std::string>& stdout_tail);

// Whether an attempt that ended this way may be judged by the rule at all: a plain failure or an out-of-memory
// failure of a run alone on its device, ended by its own exit (not a signal), with an error line.
bool RepeatableFailure(const FailureFacts& f);

// The reason not to retry after `latest` when `previous` (the attempt `previous_no` of the same run) failed
// alike, e.g. "the same error as attempt 1 (failed: ValueError: bad value): not retried"; nullopt when the
// retry stands.
std::optional<std::string> SameFailureAgain(const FailureFacts& previous, int previous_no, const FailureFacts& latest);

struct RetryPolicy {
  int retries = 2;  // how many failed attempts of a run are tried again
  // How many attempts of a run may fail to start for want of a resource (a transient start_failed: no process or
  // descriptor to be had) before the run fails. They do not count against `retries`: the command is not at fault.
  int transient_starts = 8;
};

// The wait before a run is tried again after its `n`-th (n >= 1) transient start failure: 0.25 s doubled per
// failure up to 10 s, times `jitter` (in [0.5, 1.5)), so that runs that failed together do not retry together and
// a machine short of processes gets time to free some.
double TransientStartDelay(int n, double jitter);

// The state a run moves to after an attempt ended with `c`, when `failures_before` earlier attempts failed:
//   finished -> done;
//   stopped -> queued (saturate stopped it, e.g. on an interrupt: not a failure, it runs again);
//   start_failed -> failed (the same command would fail the same way; StateAfterOutcome retries a transient one);
//   failed, gpu_oom, host_oom, worker_killed -> retrying while failures stay within policy.retries, else failed.
RunState StateAfterAttempt(run::ExitClass c, int failures_before, const RetryPolicy& policy);

// Whether an attempt ending with `c` counts against the retry budget.
bool CountsAsFailure(run::ExitClass c);

// The state a run moves to after `outcome`: done when stopped early, queued for an out-of-memory failure while
// packed, retrying after a transient start failure while `transient_before` (the run's earlier ones) stays under
// policy.transient_starts, else StateAfterAttempt; and whether the attempt counts against the retry budget (a
// transient start failure does not).
RunState StateAfterOutcome(const AttemptOutcome& outcome, int failures_before, const RetryPolicy& policy,
                           int transient_before = 0);
bool CountsAsFailure(const AttemptOutcome& outcome);

}  // namespace sat::sweep
