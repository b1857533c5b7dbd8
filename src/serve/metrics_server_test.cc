#include "serve/metrics_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace sat::serve {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A raw client socket on loopback, closed when it goes.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~RawClient() { close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  bool Send(std::string_view text) {
    return send(fd_, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(text.size());
  }
  // What the server sends until it closes the connection (or resets it), or `wait` passes; `ended` says it closed.
  std::string ReadAll(milliseconds wait, bool* ended = nullptr) {
    std::string got;
    const auto deadline = Clock::now() + wait;
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) break;
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (ended) *ended = true;
        return got;
      }
      got.append(buf, static_cast<size_t>(n));
    }
    if (ended) *ended = false;
    return got;
  }
  // Whether the server has closed this connection by now (without waiting).
  bool ClosedByServer() {
    bool ended = false;
    ReadAll(milliseconds(0), &ended);
    return ended;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// A server on a free loopback port whose page is "x 1\n".
std::unique_ptr<MetricsServer> StartServing(const ServeLimits& limits = {}) {
  auto server = MetricsServer::Start({"127.0.0.1", 0}, [] { return std::string("x 1\n"); }, limits);
  EXPECT_TRUE(server) << server.error().message;
  return server.ok() ? std::move(*server) : nullptr;
}

// `count` connections to `port` that have sent nothing yet.
std::vector<std::unique_ptr<RawClient>> Connect(int port, int count) {
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < count; ++i) {
    clients.push_back(std::make_unique<RawClient>(port));
    EXPECT_TRUE(clients.back()->connected());
  }
  return clients;
}

// One scrape on a fresh connection, with a 2 s budget: the page, or "" when it failed or was late.
std::string Scrape(int port, milliseconds* took) {
  const auto start = Clock::now();
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(2, 0);
  auto page = client.Get("/metrics");
  *took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  return page && page->status == 200 ? page->body : "";
}

ListenAddress Parsed(std::string_view text) {
  Result<ListenAddress> a = ParseListenAddress(text);
  EXPECT_TRUE(a) << a.error().message;
  return a.ok() ? *a : ListenAddress{};
}

std::string ParseError(std::string_view text) {
  Result<ListenAddress> a = ParseListenAddress(text);
  EXPECT_FALSE(a) << text;
  return a.ok() ? "" : a.error().message;
}

TEST(ParseListenAddress, ABarePortListensOnLoopback) {
  ListenAddress a = Parsed("9401");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9401);
  EXPECT_EQ(Parsed(kDefaultListen).ToString(), "127.0.0.1:9400");
}

TEST(ParseListenAddress, AddressesAsGiven) {
  EXPECT_EQ(Parsed("0.0.0.0:9400").host, "0.0.0.0");
  EXPECT_EQ(Parsed("localhost:8080").port, 8080);
  ListenAddress v6 = Parsed("[::1]:9400");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.ToString(), "[::1]:9400");
  EXPECT_EQ(Parsed("127.0.0.1:0").port, 0);
}

TEST(ParseListenAddress, BadInputNamesItAndTheForm) {
  EXPECT_THAT(ParseError("http"), HasSubstr("--serve 'http': 'http' is not a port"));
  EXPECT_THAT(ParseError("99999"), HasSubstr("not a port (0 to 65535)"));
  EXPECT_THAT(ParseError("127.0.0.1:"), HasSubstr("'' is not a port"));
  EXPECT_THAT(ParseError(":9400"), HasSubstr("the address before the colon is empty"));
  EXPECT_THAT(ParseError("::1:9400"), HasSubstr("write an IPv6 address in brackets"));
  EXPECT_THAT(ParseError("[::1]9400"), HasSubstr("]:PORT"));
  EXPECT_THAT(ParseError("-1"), HasSubstr("e.g. 9400, 127.0.0.1:9400"));
}

TEST(MetricsServer, ServesTheRenderedPageAtMetrics) {
  std::atomic<int> renders{0};
  auto server = MetricsServer::Start({"127.0.0.1", 0}, [&] {
    ++renders;
    return std::string("# HELP x An example.\n# TYPE x gauge\nx 1\n");
  });
  ASSERT_TRUE(server) << server.error().message;
  const ListenAddress& bound = (*server)->address();
  EXPECT_GT(bound.port, 0);
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(bound.port) + "/metrics");

  httplib::Client client(bound.host, bound.port);
  auto page = client.Get("/metrics");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(page->body, "# HELP x An example.\n# TYPE x gauge\nx 1\n");
  // Each scrape renders afresh.
  ASSERT_TRUE(client.Get("/metrics"));
  EXPECT_EQ(renders.load(), 2);

  auto root = client.Get("/");
  ASSERT_TRUE(root);
  EXPECT_THAT(root->body, HasSubstr("/metrics"));
  auto missing = client.Get("/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// Only GET and HEAD are answered; a body is never read into memory, whatever its size.
TEST(MetricsServer, RefusesOtherMethodsAndBodies) {
  auto server = MetricsServer::Start({"127.0.0.1", 0}, [] { return std::string("x 1\n"); });
  ASSERT_TRUE(server) << server.error().message;
  httplib::Client client((*server)->address().host, (*server)->address().port);
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    httplib::Request request;
    request.method = method;
    request.path = "/metrics";
    request.body = "a=1";
    request.set_header("Content-Type", "text/plain");
    auto reply = client.send(request);
    ASSERT_TRUE(reply) << method;
    EXPECT_EQ(reply->status, 405) << method;
    EXPECT_EQ(reply->get_header_value("Allow"), "GET, HEAD");
  }
  auto head = client.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);

  // A large upload is answered 405 before its body is read (the connection may close on the sender), and the
  // server goes on serving.
  httplib::Request upload;
  upload.method = "POST";
  upload.path = "/metrics";
  upload.body = std::string(64 << 20, 'x');
  upload.set_header("Content-Type", "application/octet-stream");
  auto refused = httplib::Client((*server)->address().host, (*server)->address().port).send(upload);
  EXPECT_TRUE(!refused || refused->status == 405);
  auto page = httplib::Client((*server)->address().host, (*server)->address().port).Get("/metrics");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body, "x 1\n");
}

// Two workers and no deadline on a request's headers let two clients that send a header byte now and then hold
// every worker for as long as they liked, and every scrape timed out (issue 30).
TEST(MetricsServer, SlowHeaderClientsNeitherHoldScrapesNorOutliveTheirDeadline) {
  ServeLimits limits;
  limits.header_deadline = milliseconds(800);
  auto server = StartServing(limits);
  ASSERT_NE(server, nullptr);
  const int port = server->address().port;

  std::vector<std::unique_ptr<RawClient>> slow = Connect(port, 4);
  for (auto& c : slow) ASSERT_TRUE(c->Send("GET /metrics HTTP/1.1\r\nX-Slow: "));
  // A byte from each every 100 ms, for at most 3 s (well past the deadline).
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const auto end = Clock::now() + milliseconds(3000);
    while (!done && Clock::now() < end) {
      for (auto& c : slow) c->Send("a");
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  std::this_thread::sleep_for(milliseconds(200));
  for (int i = 0; i < 3; ++i) {
    milliseconds took{};
    EXPECT_EQ(Scrape(port, &took), "x 1\n") << "scrape " << i << " while slow clients send headers";
    EXPECT_LT(took.count(), 1000) << "scrape " << i;
  }
  // Each slow client is answered 408 and closed at its deadline, however it trickles.
  for (auto& c : slow) {
    bool ended = false;
    std::string answer = c->ReadAll(milliseconds(2500), &ended);
    EXPECT_TRUE(ended) << "a client still sending headers after the deadline is closed";
    if (!answer.empty()) {
      EXPECT_THAT(answer, HasSubstr("408"));
    }
  }
  done = true;
  trickle.join();
}

// 400 MB of headers grew saturate by 700 MB: cpp-httplib keeps every header and buffers a line whole before it
// checks its length. Headers past the size or count cap are refused (431) and the connection is closed.
TEST(MetricsServer, OversizedOrTooManyHeadersAreRefused) {
  auto server = StartServing();
  ASSERT_NE(server, nullptr);
  const int port = server->address().port;

  std::string many = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 100; ++i) many += "X-" + std::to_string(i) + ": b\r\n";
  RawClient counted(port);
  ASSERT_TRUE(counted.Send(many + "\r\n"));
  bool ended = false;
  EXPECT_THAT(counted.ReadAll(milliseconds(2000), &ended), HasSubstr("HTTP/1.1 431"));
  EXPECT_TRUE(ended);

  // 64 KiB of headers, a valid request otherwise: never a page, and the connection ends.
  std::string large = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 16; ++i) large += "X-" + std::to_string(i) + ": " + std::string(4000, 'b') + "\r\n";
  RawClient big(port);
  ASSERT_TRUE(big.Send(large + "\r\n"));
  std::string answer = big.ReadAll(milliseconds(2000), &ended);
  EXPECT_TRUE(ended);
  EXPECT_THAT(answer, Not(HasSubstr("200 OK")));
  milliseconds took{};
  EXPECT_EQ(Scrape(port, &took), "x 1\n");
}

// 1,500 idle connections were all held (and, with `ulimit -n 1024`, took the descriptors a sweep's runs needed).
// Beyond the cap the longest waiting one makes room, so a scrape still gets in at once.
TEST(MetricsServer, ManyIdleConnectionsAreCappedAndScrapesStillAnswered) {
  ServeLimits limits;
  limits.max_connections = 16;
  auto server = StartServing(limits);
  ASSERT_NE(server, nullptr);
  const int port = server->address().port;
  std::vector<std::unique_ptr<RawClient>> idle = Connect(port, 100);
  std::this_thread::sleep_for(milliseconds(300));
  milliseconds took{};
  EXPECT_EQ(Scrape(port, &took), "x 1\n");
  EXPECT_LT(took.count(), 1000);
  int closed = 0;
  for (auto& c : idle) closed += c->ClosedByServer() ? 1 : 0;
  EXPECT_GE(closed, 100 - 16) << "idle connections held beyond the cap of 16";
}

TEST(MetricsServer, AnIdleConnectionIsClosedAfterItsTimeout) {
  ServeLimits limits;
  limits.idle_timeout = milliseconds(300);
  auto server = StartServing(limits);
  ASSERT_NE(server, nullptr);
  RawClient idle(server->address().port);
  ASSERT_TRUE(idle.connected());
  bool ended = false;
  EXPECT_EQ(idle.ReadAll(milliseconds(1500), &ended), "");
  EXPECT_TRUE(ended) << "an idle connection outlived its 300 ms";
  // And after an answer, the kept-alive connection waits no longer either.
  RawClient kept(server->address().port);
  ASSERT_TRUE(kept.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(kept.ReadAll(milliseconds(1500), &ended), HasSubstr("x 1\n"));
  EXPECT_TRUE(ended);
}

// Exporter clients never take the descriptors a sweep's runs need: at the reserve, connections are refused.
TEST(MetricsServer, ConnectionsAreRefusedWhenOnlyTheReserveOfDescriptorsIsLeft) {
  ServeLimits limits;
  limits.descriptor_reserve = size_t{1} << 40;  // more than any limit: every connection is past the reserve
  auto server = StartServing(limits);
  ASSERT_NE(server, nullptr);
  RawClient refused(server->address().port);
  ASSERT_TRUE(refused.connected());
  refused.Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  bool ended = false;
  EXPECT_EQ(refused.ReadAll(milliseconds(1500), &ended), "");
  EXPECT_TRUE(ended);
}

// A scrape has no body: a GET with one is answered 413 and its body never read.
TEST(MetricsServer, AGetWithABodyIsRefused) {
  auto server = StartServing();
  ASSERT_NE(server, nullptr);
  RawClient client(server->address().port);
  ASSERT_TRUE(client.Send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
  bool ended = false;
  EXPECT_THAT(client.ReadAll(milliseconds(1500), &ended), HasSubstr("HTTP/1.1 413"));
  EXPECT_TRUE(ended);
}

TEST(MetricsServer, APortInUseIsAnErrorNamingTheAddress) {
  auto first = MetricsServer::Start({"127.0.0.1", 0}, [] { return std::string(); });
  ASSERT_TRUE(first) << first.error().message;
  ListenAddress taken = (*first)->address();
  auto second = MetricsServer::Start(taken, [] { return std::string(); });
  ASSERT_FALSE(second);
  EXPECT_THAT(second.error().message, HasSubstr("cannot serve on " + taken.ToString()));
  EXPECT_THAT(second.error().message, HasSubstr("in use"));
}

TEST(MetricsServer, AnAddressNotOfThisMachineIsAnError) {
  auto server = MetricsServer::Start({"192.0.2.1", 0}, [] { return std::string(); });  // TEST-NET-1
  ASSERT_FALSE(server);
  EXPECT_THAT(server.error().message, HasSubstr("cannot serve on 192.0.2.1:0"));
}

TEST(MetricsServer, StopsAtOnceEvenRightAfterStarting) {
  for (int i = 0; i < 20; ++i) {
    auto server = MetricsServer::Start({"127.0.0.1", 0}, [] { return std::string(); });
    ASSERT_TRUE(server) << server.error().message;
  }
}

}  // namespace
}  // namespace sat::serve
