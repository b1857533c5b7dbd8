// The HTTP side of `--serve`: a Prometheus scrape target at http://ADDR:PORT/metrics, on its own thread, built on
// cpp-httplib (Debian's libcpp-httplib-dev).
//
// Threads: the server accepts on its own thread and answers on the workers of serve/connections.h, which also
// holds the limits that keep slow, idle or hostile clients from stalling scrapes. `render` runs on the workers,
// once per request to /metrics, possibly while the owning thread publishes new figures, so it must be thread-safe
// (live::LiveFigures::Snapshot is). Start and the destructor belong to the owning thread; the destructor stops
// the server and joins its threads before returning, so `render` is not called after it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "serve/connections.h"
#include "util/result.h"

namespace httplib {
class Server;
}

namespace sat::serve {

// Where to listen. `host` is an IPv4 or IPv6 address or a host name, without brackets.
struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 9400;  // dcgm-exporter's port; 0 asks the kernel for a free one
  // "127.0.0.1:9400", "[::1]:9400"
  std::string ToString() const;
};

inline constexpr std::string_view kDefaultListen = "127.0.0.1:9400";

// Parses --serve's "[ADDR:]PORT": "9400", "127.0.0.1:9400", "0.0.0.0:9400", "[::1]:9400", "localhost:9400".
// A bare port listens on loopback only. Usage error naming `text` when the port is not 0..65535 or the
// address is empty or an unbracketed IPv6 address.
Result<ListenAddress> ParseListenAddress(std::string_view text);

class MetricsServer {
 public:
  // The page's body for one scrape.
  using Render = std::function<std::string()>;

  // Binds `address` now and serves from a new thread: GET /metrics answers render() as
  // "text/plain; version=0.0.4", GET / a line that points there, anything else 404. Error naming the address
  // when it cannot be bound (in use, not this machine's, no permission). `limits`: what a client may cost.
  static Result<std::unique_ptr<MetricsServer>> Start(const ListenAddress& address, Render render,
                                                      const ServeLimits& limits = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound address (the real port when 0 was asked for), and the page's URL.
  const ListenAddress& address() const { return address_; }
  std::string url() const;

 private:
  MetricsServer(ListenAddress address, std::unique_ptr<httplib::Server> server);

  ListenAddress address_;
  std::unique_ptr<httplib::Server> server_;
  std::atomic<bool> listening_done_{false};  // the server's loop has returned
  std::thread thread_;
};

}  // namespace sat::serve
