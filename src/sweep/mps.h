// NVIDIA's Multi-Process Service for one sweep (`saturate sweep --mps`): kernels of the runs sharing a GPU then
// run concurrently instead of time-sliced. saturate starts its own control daemon with private pipe and log
// folders, so it never touches a daemon someone else runs, and quits it at the end.
//
// The folder is $TMPDIR/saturate-mps-XXXXXX (pipe/, log/), and an `owner` file in it names the saturate process
// that started the daemon (pid and start time, so a reused pid is not taken for it). A `kill -9` of saturate
// leaves the daemon running (nothing runs after SIGKILL); the next Start finds every such folder of this user
// whose owner is gone, quits its daemon (`echo quit | CUDA_MPS_PIPE_DIRECTORY=<dir>/pipe
// nvidia-cuda-mps-control`) and removes the folder. Daemons of a live saturate are left alone.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/result.h"

namespace sat::sweep {

class MpsDaemon {
 public:
  // Quits the daemons that saturate processes killed earlier left behind, then starts `nvidia-cuda-mps-control
  // -d`. Error when the program is not on PATH (no NVIDIA driver utilities), or when it fails to start the daemon
  // (the message carries the log folder).
  static Result<std::unique_ptr<MpsDaemon>> Start();
  // Asks the daemon to quit and waits for the control program; removes the folders.
  ~MpsDaemon();
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // What every run's environment needs to reach this daemon: CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY.
  const std::map<std::string, std::string>& env() const { return env_; }
  // What Start did besides starting: "quit the MPS daemon that saturate (pid 4242) left running in /tmp/...".
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  MpsDaemon(std::string program, std::string dir, std::vector<std::string> notes);
  std::string program_, dir_;
  std::map<std::string, std::string> env_;
  std::vector<std::string> notes_;
};

}  // namespace sat::sweep
