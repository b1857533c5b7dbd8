// Whether a process has loaded PyTorch, read from its memory map (/proc/<pid>/maps): torch's native libraries
// (libtorch*.so, torch/_C*.so) are mapped from the moment a script imports torch. Used to tell "the script never
// loaded torch" from "it loaded torch but has not reported yet" (probe's report, sweep's start-up state).
//
// The /proc root is a parameter so tests can point it at fixture trees. Thread-safe (no shared state).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace sat::telemetry {

// Whether <proc_root>/<pid>/maps lists torch's native libraries. nullopt when the map cannot be read or is empty
// (the process is gone, a zombie, or another user's).
std::optional<bool> MapsTorch(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace sat::telemetry
