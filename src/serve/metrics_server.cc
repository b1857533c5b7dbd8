#include "serve/metrics_server.h"

#include <fmt/core.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <utility>

#include "monitor/exposition.h"
#include "util/strings.h"
#include "util/thread_guard.h"

namespace sat::serve {
namespace {

// Two workers: Prometheus keeps one connection alive between scrapes, and a person's curl gets the other.
constexpr size_t kWorkers = 2;
// A scrape has no body; anything larger than this is refused (413) before cpp-httplib would read it into memory.
constexpr size_t kMaxRequestBody = 4096;
constexpr int kMaxPort = 65535;

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

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const ListenAddress& address, Render render) {
  auto server = std::make_unique<httplib::Server>();
  server->new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  // cpp-httplib sets SO_REUSEPORT, which on Linux lets a second server bind a port already listened on; plain
  // SO_REUSEADDR makes a port in use an error, as it should be. TCP_NODELAY (inherited by accepted sockets): the
  // headers and the page go out in two writes, and Nagle's algorithm would hold the page for the client's delayed
  // ACK, 40 ms per scrape on a kept-alive connection.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  server->set_payload_max_length(kMaxRequestBody);
  // Routed before any body is read: only GET and HEAD are answered, so nobody can make saturate read an upload.
  server->set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    if (request.method == "GET" || request.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    response.status = 405;
    response.set_header("Allow", "GET, HEAD");
    response.set_content("saturate: only GET and HEAD\n", "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
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
  std::unique_ptr<MetricsServer> self(new MetricsServer(bound, std::move(server)));
  MetricsServer* raw = self.get();
  self->thread_ = std::thread([raw] {
    // cpp-httplib sends without MSG_NOSIGNAL: a scraper that hangs up mid-page would raise SIGPIPE and end
    // saturate. Blocked here, it is blocked in the worker threads this thread starts, and nowhere else.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
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
