// The receiving end of the helper channel: a Unix datagram socket that `import saturate` sends to
// (docs/helper-protocol.md). The runner passes path() to the training command as SATURATE_CHANNEL.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "measure/helper_message.h"
#include "util/result.h"

namespace sat::measure {

// Owns a private directory (mode 0700, made by mkdtemp under $TMPDIR, or /tmp when $TMPDIR is unset or too long
// for a socket path) holding the bound socket; the destructor closes the socket and removes both. The descriptor
// is close-on-exec, so training commands do not inherit it. One thread polls; not thread-safe.
class HelperChannel {
 public:
  static Result<std::unique_ptr<HelperChannel>> Open();
  ~HelperChannel();
  HelperChannel(const HelperChannel&) = delete;
  HelperChannel& operator=(const HelperChannel&) = delete;

  // Absolute path of the socket.
  const std::string& path() const { return path_; }

  // Waits up to `timeout_ms` (0: do not wait, negative: without limit) for a datagram, then returns every
  // message already queued, in arrival order (possibly none). Malformed datagrams are counted and skipped. An
  // error only for a failing socket; an interrupted wait returns what has arrived.
  Result<std::vector<HelperMessage>> Poll(int timeout_ms);

  size_t received() const { return received_; }    // datagrams read, malformed ones included
  size_t malformed() const { return malformed_; }  // datagrams skipped: unparsable, invalid or oversized
  const std::string& last_malformed() const { return last_malformed_; }  // why the latest one was skipped

 private:
  HelperChannel(int fd, std::string dir, std::string path);

  int fd_;
  std::string dir_, path_;
  size_t received_ = 0, malformed_ = 0;
  std::string last_malformed_;
  std::vector<char> buffer_;
};

}  // namespace sat::measure
