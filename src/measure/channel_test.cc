#include "measure/channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace sat::measure {
namespace {

// The sending side, as `import saturate` does it: an unbound datagram socket and sendto().
class Sender {
 public:
  explicit Sender(const std::string& path) : fd_(socket(AF_UNIX, SOCK_DGRAM, 0)) {
    addr_.sun_family = AF_UNIX;
    std::strncpy(addr_.sun_path, path.c_str(), sizeof(addr_.sun_path) - 1);
  }
  ~Sender() { close(fd_); }
  bool Send(const std::string& data) {
    return sendto(fd_, data.data(), data.size(), 0, reinterpret_cast<const sockaddr*>(&addr_), sizeof addr_) ==
           static_cast<ssize_t>(data.size());
  }

 private:
  int fd_;
  sockaddr_un addr_{};
};

std::string Progress(int steps) {
  return R"({"v":1,"type":"progress","run":"r","pid":7,"t":1.5,"steps":)" + std::to_string(steps) + R"(,"samples":)" +
         std::to_string(steps * 32) + "}";
}

// Polls until `count` messages have come or a generous deadline passes.
std::vector<HelperMessage> Receive(HelperChannel& channel, size_t count) {
  std::vector<HelperMessage> all;
  for (int i = 0; i < 50 && all.size() < count; ++i) {
    Result<std::vector<HelperMessage>> got = channel.Poll(100);
    EXPECT_TRUE(got) << got.error().message;
    if (!got) break;
    all.insert(all.end(), got->begin(), got->end());
  }
  return all;
}

TEST(HelperChannel, RoundTripThroughARealSocket) {
  Result<std::unique_ptr<HelperChannel>> channel = HelperChannel::Open();
  ASSERT_TRUE(channel) << channel.error().message;
  HelperChannel& c = **channel;
  Sender sender(c.path());
  ASSERT_TRUE(sender.Send(Progress(1)));
  ASSERT_TRUE(sender.Send(Progress(2)));
  ASSERT_TRUE(sender.Send(Progress(3)));
  const std::vector<HelperMessage> got = Receive(c, 3);
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].steps, i + 1);
    EXPECT_EQ(got[i].pid, 7);
  }
  EXPECT_EQ(c.received(), 3u);
  EXPECT_EQ(c.malformed(), 0u);
}

TEST(HelperChannel, MalformedDatagramsAreCountedAndSkipped) {
  Result<std::unique_ptr<HelperChannel>> channel = HelperChannel::Open();
  ASSERT_TRUE(channel) << channel.error().message;
  HelperChannel& c = **channel;
  Sender sender(c.path());
  ASSERT_TRUE(sender.Send("not json"));
  ASSERT_TRUE(sender.Send(Progress(4)));
  ASSERT_TRUE(sender.Send(std::string(100000, ' ')));
  ASSERT_TRUE(sender.Send(R"({"v":1,"type":"progress"})"));
  ASSERT_TRUE(sender.Send(Progress(5)));
  const std::vector<HelperMessage> got = Receive(c, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].steps, 4);
  EXPECT_EQ(got[1].steps, 5);
  EXPECT_EQ(c.received(), 5u);
  EXPECT_EQ(c.malformed(), 3u);
  EXPECT_EQ(c.last_malformed(), "missing field 'run'");
}

TEST(HelperChannel, PollWithoutTrafficReturnsNothing) {
  Result<std::unique_ptr<HelperChannel>> channel = HelperChannel::Open();
  ASSERT_TRUE(channel) << channel.error().message;
  Result<std::vector<HelperMessage>> got = (*channel)->Poll(0);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->empty());
}

TEST(HelperChannel, PrivateDirectoryRemovedOnDestruction) {
  std::filesystem::path dir;
  {
    Result<std::unique_ptr<HelperChannel>> channel = HelperChannel::Open();
    ASSERT_TRUE(channel) << channel.error().message;
    const std::filesystem::path socket_path = (*channel)->path();
    dir = socket_path.parent_path();
    EXPECT_TRUE(std::filesystem::is_socket(socket_path));
    struct stat st {};
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(HelperChannel, UsesTmpdirAndFallsBackWhenTooLong) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  const std::filesystem::path mine =
      std::filesystem::temp_directory_path() / ("measure-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(mine);
  setenv("TMPDIR", mine.c_str(), 1);
  Result<std::unique_ptr<HelperChannel>> inside = HelperChannel::Open();
  setenv("TMPDIR", ("/" + std::string(200, 'x')).c_str(), 1);
  Result<std::unique_ptr<HelperChannel>> fallback = HelperChannel::Open();
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  ASSERT_TRUE(inside) << inside.error().message;
  ASSERT_TRUE(fallback) << fallback.error().message;
  EXPECT_EQ(std::filesystem::path((*inside)->path()).parent_path().parent_path(), mine);
  EXPECT_EQ((*fallback)->path().rfind("/tmp/saturate-", 0), 0u);
  inside = Error{"closed"};
  std::filesystem::remove(mine);
}

}  // namespace
}  // namespace sat::measure
