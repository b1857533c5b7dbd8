// One controller per journal. A sweep's controller (local or Slurm) holds an exclusive flock(2) on a lock file
// beside its journal ("<journal>.lock") for its whole life, with its host, pid and start time written in it, so a
// second `saturate sweep --resume` (on this machine or, on a shared filesystem whose locks span hosts, on
// another) is refused with who holds the journal instead of re-queueing live runs and running them twice.
//
// The kernel drops the lock when the holder exits in any way (kill -9 included), so a stale lock file never
// blocks a resume. Readers (`sweep status`, `sweep export`) do not take it: they open the journal read-only.
//
// The lock file sits in a folder people share, so it is opened as a file saturate may not own: never through a
// symbolic link (O_NOFOLLOW), created with O_EXCL when missing, and an existing one is written only when it is a
// plain file with one name holding nothing or a holder line; anything else is refused untouched. The lock belongs
// to the journal's identity, its resolved path, so the same journal reached through a symlinked folder takes the
// same lock.
#pragma once

#include <memory>
#include <string>

#include "util/result.h"

namespace sat::sweep {

class ControllerLock {
 public:
  // Takes the lock without waiting. Error (exit code 2) when another process holds it: "journal J is in use by
  // saturate pid P on host H since T (lock file L): wait for it to end, or stop it"; or when the lock file is a
  // symbolic link or not saturate's (naming it). Error (exit code 1) when it cannot be created.
  static Result<std::unique_ptr<ControllerLock>> Acquire(const std::string& journal_path);
  ~ControllerLock();
  ControllerLock(const ControllerLock&) = delete;
  ControllerLock& operator=(const ControllerLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  ControllerLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

// "<journal>.lock" of the journal's resolved path: realpath of the journal when it exists, else of its folder
// plus its name; the path as given when neither resolves.
std::string ControllerLockPath(const std::string& journal_path);

}  // namespace sat::sweep
