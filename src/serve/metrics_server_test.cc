#include "serve/metrics_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>

namespace sat::serve {
namespace {

using ::testing::HasSubstr;

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
