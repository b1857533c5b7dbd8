#include "serve/connections.h"

#include <fcntl.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "util/fd_limit.h"
#include "util/thread_guard.h"

namespace sat::serve {

struct Connections::Conn {
  int fd = -1;
  std::string buffer;               // bytes received and not yet answered
  Clock::time_point waiting_since;  // connected, or last answered
  std::optional<Clock::time_point> first_byte;  // of the request being read
  size_t head = 0;                  // once whole: the header block's length in `buffer`
  bool has_body = false;
  size_t answered = 0;
};

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kBlankLine = "\r\n\r\n";
constexpr auto kLongestPoll = std::chrono::milliseconds(1000);

// A short answer sent as the connection is closed: the client learns why, if it still reads.
void Refuse(int fd, std::string_view status) {
  const std::string text =
      "HTTP/1.1 " + std::string(status) + "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  (void)!send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether a header block declares a body: Content-Length other than 0, or any Transfer-Encoding.
bool DeclaresBody(std::string_view head) {
  const std::string lower = Lower(head);
  if (lower.find("\ntransfer-encoding:") != std::string::npos) return true;
  for (size_t at = lower.find("\ncontent-length:"); at != std::string::npos;
       at = lower.find("\ncontent-length:", at + 1)) {
    size_t value = lower.find_first_not_of(" \t", at + 16);
    if (value == std::string::npos || lower[value] != '0') return true;
    size_t after = lower.find_first_not_of('0', value);
    if (after == std::string::npos || (lower[after] != '\r' && lower[after] != ' ' && lower[after] != '\t')) {
      return true;
    }
  }
  return false;
}

std::chrono::milliseconds Left(Clock::time_point deadline, Clock::time_point now) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::ceil<std::chrono::milliseconds>(deadline - now));
}

void NameOf(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* a = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? getpeername(fd, a, &length) : getsockname(fd, a, &length)) != 0) return;
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(a, length, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return;
  }
  ip = host;
  port = std::atoi(service);
}

// One request as cpp-httplib reads it: its header block, already received whole, then the end of input; writes go
// to the socket (non-blocking) until the answer's deadline.
class RequestStream final : public httplib::Stream {
 public:
  RequestStream(int fd, std::string_view head, Clock::time_point deadline)
      : fd_(fd), head_(head), deadline_(deadline) {}

  bool is_readable() const override { return !head_.empty(); }
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return poll(&p, 1, static_cast<int>(Left(deadline_, Clock::now()).count())) > 0 && (p.revents & POLLOUT);
  }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, head_.size());
    std::memcpy(ptr, head_.data(), n);
    head_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    size_t done = 0;
    while (done < size) {
      ssize_t n = send(fd_, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && is_writable()) {
        continue;
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { NameOf(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { NameOf(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  int fd_;
  std::string_view head_;
  Clock::time_point deadline_;
};

}  // namespace

Connections::Connections(const ServeLimits& limits, Answer answer)
    : limits_(limits), answer_(std::move(answer)), descriptor_limit_(DescriptorLimit()) {
  if (pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  poller_ = std::thread([this] { GuardThread("metrics server: connections", [this] { Poll(); }); });
  for (size_t i = 0; i < std::max<size_t>(limits_.workers, 1); ++i) {
    workers_.emplace_back([this] { GuardThread("metrics server: worker", [this] { Work(); }); });
  }
}

Connections::~Connections() {
  Stop();
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

void Connections::Admit(int fd) {
  // Not inherited by the commands saturate starts, and never blocking the poller or a worker.
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  // The kernel hands out the lowest free descriptor: one this high means at most the reserve is left.
  if (descriptor_limit_ != SIZE_MAX &&
      static_cast<size_t>(fd) + limits_.descriptor_reserve >= descriptor_limit_) {
    close(fd);
    return;
  }
  auto c = std::make_unique<Conn>();
  c->fd = fd;
  c->waiting_since = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      close(fd);
      return;
    }
    arrivals_.push_back(std::move(c));
  }
  Wake();
}

void Connections::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !poller_.joinable()) return;
    stopping_ = true;
    // An answer blocked on a client that does not read fails now instead of at its deadline.
    for (int fd : answering_) shutdown(fd, SHUT_RDWR);
  }
  work_ready_.notify_all();
  Wake();
  if (poller_.joinable()) poller_.join();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : arrivals_) close(c->fd);
  for (auto& c : ready_) close(c->fd);
  for (auto& c : parked_) close(c->fd);
  arrivals_.clear();
  ready_.clear();
  parked_.clear();
}

void Connections::Wake() {
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
}

void Connections::Poll() {
  std::vector<pollfd> fds;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    ParkArrivals();
    Clock::time_point now = Clock::now();
    Clock::time_point next = now + kLongestPoll;
    fds.assign(1, pollfd{wake_[0], POLLIN, 0});
    for (const auto& c : parked_) {
      fds.push_back(pollfd{c->fd, POLLIN, 0});
      next = std::min(next, c->first_byte ? *c->first_byte + limits_.header_deadline
                                          : c->waiting_since + limits_.idle_timeout);
    }
    int ready = poll(fds.data(), fds.size(), static_cast<int>(Left(next, now).count()));
    if (ready < 0 && errno != EINTR) return;
    if (ready > 0 && (fds[0].revents & POLLIN)) {
      char drain[64];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
    }
    ReadParked(&fds);
    Sort(Clock::now());
  }
}

void Connections::ReadParked(const std::vector<pollfd>* polled) {
  // parked_[i] is (*polled)[i + 1]; a connection that hung up is closed here.
  size_t kept = 0;
  for (size_t i = 0; i < parked_.size(); ++i) {
    auto& c = parked_[i];
    if ((polled == nullptr || (*polled)[i + 1].revents != 0) && !ReadInto(*c)) {
      close(c->fd);
      continue;
    }
    parked_[kept++] = std::move(c);
  }
  parked_.resize(kept);
}

void Connections::ParkArrivals() {
  std::vector<std::unique_ptr<Conn>> arrivals;
  {
    std::lock_guard<std::mutex> lock(mu_);
    arrivals.swap(arrivals_);
  }
  if (arrivals.empty()) return;
  for (auto& c : arrivals) parked_.push_back(std::move(c));
  size_t busy = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy = busy_;
  }
  // Over the cap, what has arrived is read first, so a scraper's whole request waiting unread is answered rather
  // than closed for room.
  if (parked_.size() + busy > limits_.max_connections) ReadParked(nullptr);
  // Whole requests go to the workers (an answered connection may already hold its next one, pipelined).
  Sort(Clock::now());
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy = busy_;
  }
  if (parked_.size() + busy <= limits_.max_connections) return;
  // Still full: the connections that have waited longest without a whole request make room. A scraper's request
  // arrives whole at once, so it is among the newest, never the longest waiting.
  const size_t excess = std::min(parked_.size(), parked_.size() + busy - limits_.max_connections);
  std::nth_element(parked_.begin(), parked_.begin() + static_cast<std::ptrdiff_t>(excess), parked_.end(),
                   [](const auto& a, const auto& b) { return a->waiting_since < b->waiting_since; });
  for (size_t i = 0; i < excess; ++i) close(parked_[i]->fd);
  parked_.erase(parked_.begin(), parked_.begin() + static_cast<std::ptrdiff_t>(excess));
}

bool Connections::ReadInto(Conn& c) {
  char chunk[4096];
  const size_t room = limits_.max_header_bytes + 1 - std::min(c.buffer.size(), limits_.max_header_bytes);
  ssize_t n = recv(c.fd, chunk, std::min(sizeof chunk, room), MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (n == 0) return false;  // hung up
  if (!c.first_byte) c.first_byte = Clock::now();
  c.buffer.append(chunk, static_cast<size_t>(n));
  return true;
}

void Connections::Sort(Clock::time_point now) {
  std::vector<std::unique_ptr<Conn>> whole;
  size_t kept = 0;
  for (size_t i = 0; i < parked_.size(); ++i) {
    auto& c = parked_[i];
    const size_t end = c->buffer.find(kBlankLine);
    const size_t head = end == std::string::npos ? c->buffer.size() : end + kBlankLine.size();
    const size_t lines = static_cast<size_t>(std::count(c->buffer.begin(), c->buffer.begin() + head, '\n'));
    // The request line and the blank line are not headers.
    const size_t headers = lines >= 2 ? lines - 2 : 0;
    if (head > limits_.max_header_bytes || (end == std::string::npos && lines > limits_.max_header_lines + 1) ||
        (end != std::string::npos && headers > limits_.max_header_lines)) {
      Refuse(c->fd, "431 Request Header Fields Too Large");
      close(c->fd);
    } else if (end != std::string::npos) {
      c->head = head;
      c->has_body = DeclaresBody(std::string_view(c->buffer).substr(0, head));
      whole.push_back(std::move(c));
    } else if (c->first_byte && now >= *c->first_byte + limits_.header_deadline) {
      Refuse(c->fd, "408 Request Timeout");
      close(c->fd);
    } else if (!c->first_byte && now >= c->waiting_since + limits_.idle_timeout) {
      close(c->fd);
    } else {
      parked_[kept++] = std::move(c);
    }
  }
  parked_.resize(kept);
  if (whole.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : whole) ready_.push_back(std::move(c));
    busy_ += whole.size();
  }
  work_ready_.notify_all();
}

void Connections::Work() {
  for (;;) {
    std::unique_ptr<Conn> c;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      c = std::move(ready_.front());
      ready_.pop_front();
      answering_.insert(c->fd);
    }
    RequestStream stream(c->fd, std::string_view(c->buffer).substr(0, c->head),
                         Clock::now() + limits_.write_deadline);
    // A body is never read, so what follows the headers is not a request: the connection ends with this answer.
    const bool last = c->has_body || c->answered + 1 >= limits_.requests_per_connection;
    bool closed = false;
    const bool ok = answer_(stream, last, closed);
    ++c->answered;
    c->buffer.erase(0, c->head);
    c->head = 0;
    c->has_body = false;
    c->waiting_since = Clock::now();
    c->first_byte = c->buffer.empty() ? std::nullopt : std::optional(c->waiting_since);
    bool again = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      answering_.erase(c->fd);
      --busy_;
      again = ok && !closed && !last && !stopping_;
      if (again) arrivals_.push_back(std::move(c));
    }
    if (again) {
      Wake();
    } else {
      close(c->fd);
    }
  }
}

}  // namespace sat::serve
