// Process-wide interrupt state: SIGINT, SIGTERM and SIGHUP set a flag instead of killing saturate, so the
// program can stop its runs (which live in their own process groups and do not see the terminal's Ctrl-C),
// write what it measured, and exit with 128 + the first signal (130 for Ctrl-C).
//
// Runs watch this flag themselves (RunSpec::stop_on_interrupt): an interrupt starts their stop ladder, a
// second interrupt (an impatient second Ctrl-C) sends SIGKILL at once. Callers' own loops check
// Interrupted() between runs.
#pragma once

namespace sat::run {

// Installs the handlers (idempotent, thread-safe). A SIGHUP ignored when saturate started (nohup) stays ignored. The handlers only bump an atomic counter and remember the
// first signal; every further signal counts again (no SA_RESETHAND).
void InstallInterruptHandlers();

// True once any of the signals arrived since the last ClearInterrupt(). Async-signal-safe, any thread.
bool Interrupted();

// How many interrupt signals arrived since the last ClearInterrupt().
int InterruptCount();

// The first signal that arrived (SIGINT, SIGTERM or SIGHUP), 0 if none; for an exit code of 128 + signal.
int InterruptSignal();

// Forgets earlier interrupts. A test seam: the flag is process-wide, so a test that raised SIGINT clears it
// before the next test runs; saturate itself never clears one (an interrupt ends the command).
void ClearInterrupt();

}  // namespace sat::run
