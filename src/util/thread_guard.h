// The whole work of a thread saturate starts (the run supervisor, the sampler, the metrics server) goes through
// GuardThread. Errors are values; an exception that escapes a thread is a bug, and std::terminate would abort
// saturate with a core dump in the middle of an unattended sweep. Instead it ends saturate the way the top-level
// catch does (cli/app.cc): one line naming the thread and the exception, and exit status 1. Children die with it
// (their parent-death signal and their run's cgroup); the sweep journal is crash-consistent. Under the test suite
// (SATURATE_ABORT_ON_INTERNAL_ERROR set) it aborts, so the bug is not hidden.
#pragma once

#include <exception>
#include <string_view>

namespace sat {

// Prints "saturate: internal error in the <thread> thread (please report it): <what>" and ends the process:
// abort() when SATURATE_ABORT_ON_INTERNAL_ERROR is set, else _exit(1) after flushing stdout and stderr.
[[noreturn]] void EndFromThread(std::string_view thread, std::string_view what);

template <class Body>
void GuardThread(std::string_view thread, Body&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    EndFromThread(thread, e.what());
  } catch (...) {
    EndFromThread(thread, "an unknown exception");
  }
}

}  // namespace sat
