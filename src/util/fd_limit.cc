#include "util/fd_limit.h"

#include <sys/resource.h>

#include <cstdint>

namespace sat {
namespace {

size_t AsSize(rlim_t limit) { return limit == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(limit); }

}  // namespace

size_t RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return SIZE_MAX;
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return AsSize(limit.rlim_cur);
}

size_t DescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return SIZE_MAX;
  return AsSize(limit.rlim_cur);
}

}  // namespace sat
