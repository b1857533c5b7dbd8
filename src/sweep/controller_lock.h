// One controller per journal. A sweep's controller (local or Slurm) holds an exclusive flock(2) on a lock file
// beside its journal ("<journal>.lock") for its whole life, with its host, pid and start time written in it, so a
// second `saturate sweep --resume` (on this machine or, on a shared filesystem whose locks span hosts, on
// another) is refused with who holds the journal instead of re-queueing live runs and running them twice.
//
// The kernel drops the lock when the holder exits in any way (kill -9 included), so a stale lock file never
// blocks a resume. Readers (`sweep status`, `sweep export`) do not take it.
#pragma once

#include <memory>
#include <string>

#include "util/result.h"

namespace sat::sweep {

class ControllerLock {
 public:
  // Takes the lock without waiting. Error (exit code 2) when another process holds it: "journal J is in use by
  // saturate pid P on host H since T (lock file L): wait for it to end, or stop it"; or when the lock file cannot
  // be created.
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

// "<journal>.lock"
std::string ControllerLockPath(const std::string& journal_path);

}  // namespace sat::sweep
