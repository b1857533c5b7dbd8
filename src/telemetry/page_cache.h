// How much of a file the kernel holds in its page cache, and how to make a file cold again. A loader that reads
// files already in the cache never waits on the drive behind them, so a probe on a warm cache says nothing about
// the drive: the residency of the data files tells which of the two was measured.
//
// Residency is read with cachestat(2) (Linux 6.5 and later: one call per file, whatever its size) and, where the
// kernel lacks it, with mincore(2) over a read-only mapping of the file (one byte per page of the file). Opening a
// file is all either does: no data is read, so measuring does not warm the cache. (A FUSE file system mounted
// without kernel_cache drops a file's cached pages whenever it is opened, as its own opens do too.)
// Thread-safe: no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace sat::telemetry {

struct Residency {
  uint64_t bytes = 0;         // the file's size
  uint64_t cached_bytes = 0;  // of them in the page cache (whole pages, so at most one page over `bytes`)
};

// The residency of one file. Errors name the path: it is gone, not readable, or not a regular file.
Result<Residency> FileResidency(const std::string& path);

// Residency summed over a sample of files.
struct ResidencySample {
  size_t files = 0;           // files measured
  size_t unreadable = 0;      // of the sample, files that could not be measured (gone, not readable)
  uint64_t bytes = 0, cached_bytes = 0;
  // cached_bytes / bytes, 0..1; nullopt when nothing was measured or the files are empty.
  std::optional<double> Share() const;
};

// The residency of at most `max_files` of `paths`, taken evenly across the list (its first, then every
// paths.size() / max_files-th), so a sorted list is sampled across its whole range. A file that vanished or cannot be
// read counts in `unreadable` and is otherwise skipped.
ResidencySample SampleResidency(const std::vector<std::string>& paths, size_t max_files);

// Asks the kernel to drop the file's clean pages from the page cache (posix_fadvise POSIX_FADV_DONTNEED, after
// fdatasync so pages the caller wrote are clean and can go). The kernel may keep pages another process maps or
// has locked; tmpfs keeps them all (its pages are the file). Errors name the path.
Status DropFromPageCache(const std::string& path);

// Up to `max_files` of `paths` (evenly across the list, as SampleResidency takes them), in their order.
std::vector<std::string> EvenSample(const std::vector<std::string>& paths, size_t max_files);

}  // namespace sat::telemetry
