// What a local copy of a run's data would change, measured on a sample of the run's own files: each file read cold
// from where it lives, then copied to a local folder and read cold from there. probe's local-copy what-if rests on
// it ("a local copy of 12.4 GiB takes ~2 min on this link; the loader alone would reach ~N samples/s").
//
// "Cold": before each timed read the file's pages are dropped from the page cache (telemetry/page_cache.h), so both
// reads come from the drive or the network, as a first epoch's do. Reads are sequential, whole files, one at a time
// (the loader's own parallelism is applied by the caller). The copy lives in a fresh folder
// (saturate-cold-read-XXXXXX) under the first usable candidate folder and is removed before returning, whatever
// happens. A candidate is usable when it exists, is writable, and is neither on the source files' file system nor
// on tmpfs (whose "cold" read is memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace sat::datastore {

struct ColdReadOptions {
  size_t max_files = 32;              // files sampled (evenly across the list)
  uint64_t max_bytes = 64ull << 20;   // sampling stops once this many bytes are in
  std::vector<std::string> local_dirs;  // where the copy may go, the first usable one wins
  // A candidate on the source's own file system is refused (its copy would measure the source again); false lets
  // a test on a machine with one file system through.
  bool require_other_filesystem = true;
};

struct ColdReadTiming {
  size_t files = 0;
  uint64_t bytes = 0;
  double seconds = 0;      // wall time of the reads alone (opens included)
  double cpu_seconds = 0;  // CPU time of the reading thread in them (a FUSE or network read costs the reader
                           // kernel time a local one does not)
};

struct ColdReadComparison {
  ColdReadTiming source, local;  // the same files, from their place and from the copy
  std::string local_dir;         // the candidate that held the copy (the copy itself is gone)
  size_t vanished = 0;           // sampled files that were gone or unreadable when read; left out of both
  // local.seconds / source.seconds: how much of the source's read time a local copy keeps (< 1: faster).
  double LocalTimeRatio() const;
};

// Reads the sample cold from the source and from a local copy. Errors: no file could be read (every one vanished or
// is unreadable), or no candidate folder is usable (each named with why), or the copy could not be written (no
// room): the what-if is then left out, saying why.
Result<ColdReadComparison> CompareColdReads(const std::vector<std::string>& files, const ColdReadOptions& options);

// The time a copy of `total_files` files of `total_bytes` would take at the pace `timing` read its sample: scaled by
// whichever of the two ratios is larger (many small files cost their per-file latency, few large ones their bytes).
double CopySecondsAtPace(const ColdReadTiming& timing, size_t total_files, uint64_t total_bytes);

}  // namespace sat::datastore
