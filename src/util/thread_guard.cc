#include "util/thread_guard.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace sat {

void EndFromThread(std::string_view thread, std::string_view what) {
  std::fflush(stdout);
  fmt::print(stderr, "saturate: internal error in the {} thread (please report it): {}\n", thread, what);
  std::fflush(stderr);
  if (std::getenv("SATURATE_ABORT_ON_INTERNAL_ERROR") != nullptr) std::abort();
  _exit(1);
}

}  // namespace sat
