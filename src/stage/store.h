// The per-node store of staged datasets: one local copy of each dataset (stage/manifest.h), made once and shared by
// every run, sweep and Slurm job on the node that reads it.
//
// Layout of the store folder (created 0700):
//   <key>.data/<name>   the copy, complete and verified (<name>: the source's own base name)
//   <key>.json          its manifest and per-file checksums; written last, so a copy without it is not complete
//   <key>.partial/      a copy being made; <key>.partial.log lists the files in it that are whole (path, size, mtime,
//                       checksum), so a copy killed half way resumes from there
//   <key>.lock          flock(LOCK_EX) while a copy is made or checked: parallel runs and sweeps wait for one copy
//   <key>.use           flock(LOCK_SH) by every Lease: a copy in use is never evicted; its mtime is the last use
// The kernel drops both locks when their holder dies (kill -9 included), so a dead saturate never blocks the store.
//
// Making a copy: free space (and the cap) are checked before the first byte, evicting the least recently used
// copies that nobody holds; files are copied by several threads (a network filesystem serves small files faster
// in parallel), each file's XXH3 checksum taken as it is read; the source is listed again at the end and a copy of
// changed data is discarded and made again; every file is read back and checked against its checksum; then the
// partial folder is renamed into place. Nothing half-made is ever handed to a run.
//
// Threads: Acquire blocks (on the lock and the copy) and may be called from any thread; on_progress is called
// from the copying threads, one call at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "stage/manifest.h"
#include "util/result.h"

namespace sat::stage {

struct Progress {
  enum class Phase { kScanning, kWaiting, kCopying, kVerifying, kDone };
  Phase phase = Phase::kScanning;
  uint64_t bytes_done = 0, bytes_total = 0;  // bytes_done counts files resumed from a killed copy
  size_t files_done = 0, files_total = 0;
  double elapsed_s = 0;  // since Acquire began
};
const char* PhaseName(Progress::Phase p);  // "scanning", "waiting", "copying", "verifying", "done"

struct StoreOptions {
  std::string root;        // the store folder; created when missing
  uint64_t cap_bytes = 0;  // the store's total at most; 0: only free space limits it
  // Kept free on the store's filesystem after the copy, so staging never fills the disk the runs write to.
  uint64_t reserve_bytes = 256ull << 20;
  int threads = 8;    // files copied at once
  int max_tries = 3;  // copies discarded because the source changed or a checksum differed, before giving up
  std::function<void(const Progress&)> on_progress;
  // Polled between chunks: true stops the copy (the partial copy stays, to be resumed) with an interrupt error.
  std::function<bool()> cancelled;
  // Seams for tests: the free bytes of a folder's filesystem (default statvfs), and a call after each file is
  // copied (the count so far).
  std::function<std::optional<uint64_t>(const std::string& dir)> free_bytes;
  std::function<void(size_t files_copied)> after_file;
};

// A copy in use. While a Lease lives (in this process, or in any process it was passed to with its fd) the copy
// is not evicted. Move-only; the destructor releases it.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  ~Lease();

  const std::string& path() const { return path_; }  // the local copy: what runs read instead of the source
  const std::string& source() const { return source_; }
  uint64_t bytes() const { return bytes_; }
  size_t files() const { return files_; }
  bool reused() const { return reused_; }         // the copy was there already (made by an earlier sweep or run)
  double copy_s() const { return copy_s_; }       // seconds this Acquire spent copying (0 when reused)
  uint64_t bytes_copied() const { return copied_; }  // read from the source by this Acquire (resumed files excluded)

 private:
  friend class StoreImpl;
  int use_fd_ = -1;
  std::string path_, source_;
  uint64_t bytes_ = 0, copied_ = 0;
  size_t files_ = 0;
  bool reused_ = false;
  double copy_s_ = 0;
};

// The local copy of `source`, made if the store has none. Errors: the source's (exit 2, stage/manifest.h); not
// enough room even after evicting what nobody uses ("needs X, has Y free": exit 1, before anything is copied); a
// source that kept changing for max_tries copies; a store folder that cannot be written; an interrupt (exit 130).
Result<Lease> Acquire(const std::string& source, const StoreOptions& options);

// The complete copy of `source` when the store has one (a lease on it), else nullopt; copies nothing. Errors as
// Acquire's, but never for room.
Result<std::optional<Lease>> FindCopy(const std::string& source, const StoreOptions& options);

// The default store folder: "stage" in the user's saturate cache folder (util/cache_home.h: never a shared one); on a
// Slurm node (SLURM_JOB_ID set) the node's local scratch: $SLURM_TMPDIR, else $TMPDIR, under saturate-stage-<uid>.
// Empty when none of them is there.
std::string DefaultStoreRoot();

}  // namespace sat::stage
