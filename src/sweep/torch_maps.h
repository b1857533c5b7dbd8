// Whether a run's processes loaded PyTorch, read from their memory maps: with the automatic instrumentation on,
// such a run will report its training steps, so until its first one it is starting up (sweep/meter.h). The
// automatic layer itself says nothing before the first step.
#pragma once

#include <sys/types.h>

#include <string_view>
#include <vector>

namespace sat::sweep {

// Whether any of `pids` has torch's native libraries mapped (libtorch*.so, torch/_C*.so), as
// <proc_root>/<pid>/maps lists them. Processes whose map cannot be read (gone, or not ours) count as not.
bool AnyMapsTorch(const std::vector<pid_t>& pids, std::string_view proc_root);

}  // namespace sat::sweep
