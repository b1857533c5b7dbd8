// Where a probe's stages or a tune's trials keep their logs: under --out when it was given (created, and never
// removed), else in a fresh temporary folder (saturate-<command>-XXXXXX under TMPDIR) that goes when the LogRoot
// does, on an error too, unless Keep() was called (a failed run's logs are worth keeping).
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace sat::core {

class LogRoot {
 public:
  // `out_dir`: --out, "" when not given; `subfolder`: under it ("" for --out itself); `command`: names the
  // temporary folder. Errors name --out and the reason.
  static Result<LogRoot> Create(const std::string& out_dir, std::string_view subfolder, std::string_view command);

  LogRoot(LogRoot&& other) noexcept;
  LogRoot& operator=(LogRoot&&) = delete;
  LogRoot(const LogRoot&) = delete;
  ~LogRoot();

  const std::string& path() const { return path_; }
  bool temporary() const { return temporary_; }
  // A temporary folder stays after all.
  void Keep() { temporary_ = false; }

 private:
  LogRoot(std::string path, bool temporary) : path_(std::move(path)), temporary_(temporary) {}
  std::string path_;
  bool temporary_;
};

}  // namespace sat::core
