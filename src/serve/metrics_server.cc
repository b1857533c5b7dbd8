#include "serve/metrics_server.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

#include "monitor/exposition.h"
#include "serve/connections.h"
#include "util/strings.h"
#include "util/thread_guard.h"

namespace sat::serve {
namespace {

constexpr int kMaxPort = 65535;
// cpp-httplib listens with a backlog of 5: connections beyond it wait for a SYN retry (a second), which a flood of
// connections would impose on the scraper too.
constexpr int kListenBacklog = 128;

// cpp-httplib's accepting loop and request code, with every accepted connection handed to `Connections`, which
// reads its headers off the workers and under limits (serve/connections.h), instead of to a worker that reads
// them itself. The loop calls process_and_close_socket through the task queue; both are replaced here.
class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(const ServeLimits& limits)
      : connections_(limits, [this](httplib::Stream& stream, bool close, bool& closed) {
          return process_request(stream, close, closed, nullptr);
        }) {
    new_task_queue = [] { return new InlineQueue; };
  }
  ~GuardedServer() override { connections_.Stop(); }

  void WidenBacklog() {
    const int sock = svr_sock_;
    fcntl(sock, F_SETFD, FD_CLOEXEC);
    ::listen(sock, kListenBacklog);
  }

 private:
  // Runs each accepted connection's task at once, on the accepting thread: the task only hands it over.
  class InlineQueue final : public httplib::TaskQueue {
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override {}
  };

  bool process_and_close_socket(socket_t sock) override {
    connections_.Admit(sock);
    return true;
  }

  Connections connections_;
};

// Why `address` cannot be bound, in the kernel's words: cpp-httplib reports only that it failed.
std::string BindFailure(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) return gai_strerror(rc);
  std::string why = "cannot bind";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    bool bound = bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1) == 0;
    if (!bound) why = std::strerror(errno);
    close(fd);
    if (bound) {
      why = "cannot bind (it was free a moment later: try again)";
      break;
    }
  }
  freeaddrinfo(found);
  return why;
}

}  // namespace

std::string ListenAddress::ToString() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("--serve '{}': {} (give [ADDR:]PORT, e.g. 9400, 127.0.0.1:9400, 0.0.0.0:9400 or "
                                  "[::1]:9400)",
                                  text, why));
  };
  ListenAddress address;
  std::string_view port_text = text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("a bracketed address needs ]:PORT after it");
    }
    address.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    address.host = std::string(text.substr(0, colon));
    if (address.host.find(':') != std::string::npos) return bad("write an IPv6 address in brackets");
    port_text = text.substr(colon + 1);
  }
  if (address.host.empty()) return bad("the address before the colon is empty");
  std::optional<long long> port = ParseInt(std::string(port_text));
  if (!port || *port < 0 || *port > kMaxPort) return bad(fmt::format("'{}' is not a port (0 to 65535)", port_text));
  address.port = static_cast<int>(*port);
  return address;
}

MetricsServer::MetricsServer(ListenAddress address, std::unique_ptr<httplib::Server> server)
    : address_(std::move(address)), server_(std::move(server)) {}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const ListenAddress& address, Render render,
                                                            const ServeLimits& limits) {
  auto server = std::make_unique<GuardedServer>(limits);
  // cpp-httplib sets SO_REUSEPORT, which on Linux lets a second server bind a port already listened on; plain
  // SO_REUSEADDR makes a port in use an error, as it should be. TCP_NODELAY (inherited by accepted sockets): the
  // headers and the page go out in two writes, and Nagle's algorithm would hold the page for the client's delayed
  // ACK, 40 ms per scrape on a kept-alive connection.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  // What the Keep-Alive header tells clients (Connections enforces it).
  server->set_keep_alive_timeout(std::chrono::ceil<std::chrono::seconds>(limits.idle_timeout).count());
  server->set_keep_alive_max_count(limits.requests_per_connection);
  // Routed before any body is read: only GET and HEAD without a body are answered, so nobody can make saturate read
  // an upload (Connections never hands cpp-httplib a body, and ends such a connection after this answer).
  server->set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "GET" && request.method != "HEAD") {
      response.status = 405;
      response.set_header("Allow", "GET, HEAD");
      response.set_content("saturate: only GET and HEAD\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (request.has_header("Transfer-Encoding") || request.get_header_value<uint64_t>("Content-Length") > 0) {
      response.status = 413;
      response.set_content("saturate: a scrape has no body\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server->Get("/metrics", [render](const httplib::Request&, httplib::Response& response) {
    response.set_content(render(), std::string(monitor::kExpositionContentType));
  });
  server->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("saturate: Prometheus metrics are at /metrics\n", "text/plain; charset=utf-8");
  });

  ListenAddress bound = address;
  if (address.port == 0) {
    bound.port = server->bind_to_any_port(address.host);
    if (bound.port <= 0) return Error{fmt::format("cannot serve on {}: {}", address.ToString(), BindFailure(address))};
  } else if (!server->bind_to_port(address.host, address.port)) {
    return Error{fmt::format("cannot serve on {}: {}", address.ToString(), BindFailure(address))};
  }
  server->WidenBacklog();
  std::unique_ptr<MetricsServer> self(new MetricsServer(bound, std::move(server)));
  MetricsServer* raw = self.get();
  self->thread_ = std::thread([raw] {
    GuardThread("metrics server", [raw] { raw->server_->listen_after_bind(); });
    raw->listening_done_ = true;
  });
  return self;
}

MetricsServer::~MetricsServer() {
  // cpp-httplib's stop() does nothing before its loop has started, so wait for the loop (or its end).
  while (!server_->is_running() && !listening_done_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string MetricsServer::url() const { return fmt::format("http://{}/metrics", address_.ToString()); }

}  // namespace sat::serve
