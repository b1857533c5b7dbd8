#include "measure/channel.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace sat::measure {
namespace {

// Asked of the kernel, which caps it at net.core.rmem_max: room for bursts between polls.
constexpr int kReceiveBufferBytes = 4 << 20;
// Far above the protocol's 4 KiB, so that only a datagram too large to be a message is cut (and then skipped).
constexpr size_t kReadBufferBytes = 64 << 10;
// Bounds one Poll, so a sender flooding the socket cannot keep the caller from its other work.
constexpr size_t kMaxDatagramsPerPoll = 10000;
constexpr std::string_view kDirPattern = "/saturate-XXXXXX";
constexpr std::string_view kSocketName = "/channel";

Error SystemError(std::string_view what) { return Error{fmt::format("{}: {}", what, std::strerror(errno))}; }

// $TMPDIR when the socket path under it fits in sockaddr_un, else /tmp.
std::string BaseDir() {
  const char* tmpdir = std::getenv("TMPDIR");
  const size_t room = sizeof(sockaddr_un::sun_path) - 1 - kDirPattern.size() - kSocketName.size();
  if (tmpdir != nullptr && *tmpdir != '\0' && std::strlen(tmpdir) <= room) return tmpdir;
  return "/tmp";
}

}  // namespace

Result<std::unique_ptr<HelperChannel>> HelperChannel::Open() {
  // A private directory: nobody else can send to, remove or replace the socket.
  const std::string base = BaseDir();
  std::string dir = base + std::string(kDirPattern);
  if (mkdtemp(dir.data()) == nullptr) return SystemError(fmt::format("cannot create a directory in {}", base));
  const std::string path = dir + std::string(kSocketName);

  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    Error e = SystemError("cannot create the helper channel socket");
    rmdir(dir.c_str());
    return e;
  }
  const int rcvbuf = kReceiveBufferBytes;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);  // best effort: a smaller queue still works

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    Error e = SystemError(fmt::format("cannot bind the helper channel at {}", path));
    close(fd);
    rmdir(dir.c_str());
    return e;
  }
  return std::unique_ptr<HelperChannel>(new HelperChannel(fd, std::move(dir), path));
}

HelperChannel::HelperChannel(int fd, std::string dir, std::string path)
    : fd_(fd), dir_(std::move(dir)), path_(std::move(path)), buffer_(kReadBufferBytes) {}

HelperChannel::~HelperChannel() {
  close(fd_);
  unlink(path_.c_str());
  rmdir(dir_.c_str());
}

Result<std::vector<HelperMessage>> HelperChannel::Poll(int timeout_ms) {
  std::vector<HelperMessage> messages;
  pollfd waiting{fd_, POLLIN, 0};
  const int ready = poll(&waiting, 1, timeout_ms);
  if (ready < 0 && errno != EINTR) return SystemError("cannot wait on the helper channel");
  if (ready <= 0) return messages;

  // Drain what is queued: one wake-up usually finds several datagrams.
  for (size_t n = 0; n < kMaxDatagramsPerPoll; ++n) {
    // MSG_TRUNC makes recv return the datagram's full length, so a cut one is recognised.
    const ssize_t size = recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (size < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return SystemError("cannot read the helper channel");
    }
    ++received_;
    Result<HelperMessage> message =
        static_cast<size_t>(size) > buffer_.size()
            ? Result<HelperMessage>(Error{fmt::format("datagram of {} bytes is too large", size)})
            : ParseHelperMessage(std::string_view(buffer_.data(), static_cast<size_t>(size)));
    if (!message) {
      ++malformed_;
      last_malformed_ = message.error().message;
      continue;
    }
    messages.push_back(*std::move(message));
  }
  return messages;
}

}  // namespace sat::measure
