// Every file saturate writes for people or for another saturate (results.json, report.html, probe.json, CSV and
// JSON exports, a Slurm job's job.json and outcome files) is written through here: a temporary file in the same
// folder, synced, then renamed over the old one. A kill or a full disk mid-write leaves the last good file, never a
// truncated one, and a reader on another machine never sees a renamed, empty file.
#pragma once

#include <sys/types.h>

#include <string>

#include "util/result.h"

namespace sat {

// For files that may carry secrets (a Slurm job's job.json holds the run's environment): the owner alone reads.
inline constexpr mode_t kPrivateFileMode = 0600;

// Writes `text` to `path` with permission bits `mode` (before the umask; 0600 for a file that may carry secrets).
// Errors name the path and the system's reason; on an error the old file, if any, is untouched.
Status WriteFileAtomically(const std::string& path, const std::string& text, mode_t mode = 0644);

}  // namespace sat
