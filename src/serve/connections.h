// The exporter's connections, held apart from cpp-httplib's one-worker-per-connection model so that clients who
// are slow, idle or hostile cannot hold the workers a scrape needs.
//
// cpp-httplib 0.11 (Debian 12) reads a request's headers on a worker thread with a timeout per read only: a client
// sending a byte every few seconds holds that worker for ever, a line is buffered whole before its length is
// checked, the number of headers is not limited, and every accepted connection is queued. Here a connection is
// instead parked on one thread that polls them all and reads without blocking until its header block is whole;
// only then is it handed to a worker, which answers it through cpp-httplib's own request code (`Answer`). So:
//   - a request's whole header block must arrive within `header_deadline` of its first byte (else 408, closed),
//     and within `max_header_bytes` and `max_header_lines` (else 431, closed);
//   - a connection waiting for a request is closed after `idle_timeout`;
//   - at most `max_connections` are held; one more closes the parked connection that has waited longest;
//   - a connection is refused at once when fewer than `descriptor_reserve` descriptors would be left below the soft
//     limit, so exporter clients never take the descriptors a sweep's runs need;
//   - a request that carries a body is answered and its connection closed (a scrape has no body; the body is
//     never read).
// Workers only render and write, each answer within `write_deadline`.
//
// Threads: Admit is called from the server's accepting thread; the poller and the workers are this object's. The
// destructor (or Stop) ends them and closes every connection it holds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

struct pollfd;

namespace httplib {
class Stream;
}

namespace sat::serve {

struct ServeLimits {
  std::chrono::milliseconds header_deadline{5000};  // first byte of a request to its blank line
  std::chrono::milliseconds idle_timeout{10000};    // waiting for a request (after connecting or an answer)
  std::chrono::milliseconds write_deadline{5000};   // one whole answer
  size_t max_header_bytes = 16 * 1024;              // request line and headers
  size_t max_header_lines = 64;                     // headers, without the request line
  size_t max_connections = 64;
  size_t requests_per_connection = 100;
  size_t descriptor_reserve = 256;
  size_t workers = 2;  // a scrape is a snapshot and a render: two are plenty once nobody can hold one
};

class Connections {
 public:
  // Answers one request. `stream` reads its header block, and nothing more, and writes to the client; `close`
  // asks the answer to end the connection, and `closed` says it did. false when the connection is unusable.
  using Answer = std::function<bool(httplib::Stream& stream, bool close, bool& closed)>;

  Connections(const ServeLimits& limits, Answer answer);
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  // Takes `fd`, a newly accepted connection: it is closed at once when the descriptor reserve is reached or the
  // server is stopping, else parked until its request is whole.
  void Admit(int fd);
  // Ends the threads and closes every connection; answers in progress fail at their next write.
  void Stop();

  struct Conn;

 private:
  using Clock = std::chrono::steady_clock;

  void Poll();
  void Work();
  // Parks the connections handed over (new or answered), closing the longest waiting ones beyond the cap.
  void ParkArrivals();
  // Reads what parked connections have sent (those `polled` says are ready, or all), closing those that hung up.
  void ReadParked(const std::vector<pollfd>* polled);
  // Reads what `c` has sent; false when it hung up or broke a limit (and is to be closed).
  bool ReadInto(Conn& c);
  // Moves parked connections whose request is whole to the workers, and closes those past a deadline or a cap.
  void Sort(Clock::time_point now);
  void Wake();

  const ServeLimits limits_;
  const Answer answer_;
  const size_t descriptor_limit_;  // the soft limit when started

  std::mutex mu_;
  std::condition_variable work_ready_;
  std::vector<std::unique_ptr<Conn>> arrivals_;  // to be parked (guarded by mu_)
  std::deque<std::unique_ptr<Conn>> ready_;      // whole requests for the workers (guarded by mu_)
  std::set<int> answering_;                      // descriptors a worker holds (guarded by mu_)
  size_t busy_ = 0;                              // ready_ and answering_ together (guarded by mu_)
  bool stopping_ = false;                        // (guarded by mu_)

  std::vector<std::unique_ptr<Conn>> parked_;  // the poller's alone
  int wake_[2] = {-1, -1};
  std::thread poller_;
  std::vector<std::thread> workers_;
};

}  // namespace sat::serve
