#include "datastore/manifest.h"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sat::datastore {
namespace {

namespace fs = std::filesystem;

class ManifestTest : public testing::Test {
 protected:
  ManifestTest() {
    std::string tmpl = testing::TempDir() + "/manifest_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    fs::create_directories(dir_ + "/ds/sub");
    std::ofstream(dir_ + "/ds/a.txt") << "alpha";
    std::ofstream(dir_ + "/ds/sub/b.txt") << "beta!";
  }
  ~ManifestTest() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ManifestTest, ListsFilesFoldersAndTheirSizes) {
  auto m = ScanSource(dir_ + "/ds/");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->source, fs::canonical(dir_ + "/ds").string());
  EXPECT_FALSE(m->single_file);
  EXPECT_EQ(m->total_bytes, 10u);
  EXPECT_EQ(m->file_count, 2u);
  ASSERT_EQ(m->entries.size(), 3u);
  EXPECT_EQ(m->entries[0].rel, "a.txt");
  EXPECT_EQ(m->entries[1].rel, "sub");
  EXPECT_EQ(m->entries[1].type, Entry::Type::kDir);
  EXPECT_EQ(m->entries[2].rel, "sub/b.txt");
  EXPECT_TRUE(m->Key().starts_with("ds-"));
  EXPECT_EQ(m->Key().size(), 3u + 16);
}

TEST_F(ManifestTest, TheKeyFollowsSizesAndTimesAndNothingElse) {
  auto m1 = ScanSource(dir_ + "/ds");
  auto m2 = ScanSource(dir_ + "/ds");
  ASSERT_TRUE(m1 && m2);
  EXPECT_EQ(m1->Key(), m2->Key());
  std::ofstream(dir_ + "/ds/a.txt") << "alphabet";
  auto m3 = ScanSource(dir_ + "/ds");
  ASSERT_TRUE(m3);
  EXPECT_NE(m1->Key(), m3->Key());
}

TEST_F(ManifestTest, RoundTripsThroughJson) {
  fs::create_symlink("a.txt", dir_ + "/ds/link");
  auto m = ScanSource(dir_ + "/ds");
  ASSERT_TRUE(m);
  auto back = ManifestFromJson(ManifestToJson(*m));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, *m);
  EXPECT_FALSE(ManifestFromJson(nlohmann::json{{"source", 3}}));
}

TEST_F(ManifestTest, AMissingPathIsABadInputNamingIt) {
  auto m = ScanSource(dir_ + "/nope");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().exit_code, 2);
  EXPECT_EQ(m.error().message, "stage path " + dir_ + "/nope does not exist");
}

TEST_F(ManifestTest, ALinkOutsideTheDatasetIsRefused) {
  std::ofstream(dir_ + "/secret") << "s";
  fs::create_symlink("../../secret", dir_ + "/ds/sub/escape");
  auto m = ScanSource(dir_ + "/ds");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().exit_code, 2);
  EXPECT_NE(m.error().message.find("the link sub/escape points outside it (to ../../secret)"), std::string::npos)
      << m.error().message;
}

TEST_F(ManifestTest, ASocketOrFifoIsRefused) {
  ASSERT_EQ(mkfifo((dir_ + "/ds/pipe").c_str(), 0600), 0);
  auto m = ScanSource(dir_ + "/ds");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("pipe is neither a file, a folder nor a link"), std::string::npos);
}

// As another user (root reads every folder, so a root test drops to nobody in a child process).
TEST_F(ManifestTest, AnUnreadableFolderIsNamed) {
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_ + "/ds", fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_ + "/ds/sub", fs::perms::none);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    auto m = ScanSource(dir_ + "/ds");
    const std::string message = m ? "scanned" : fmt::format("{} {}", m.error().exit_code, m.error().message);
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  fs::permissions(dir_ + "/ds/sub", fs::perms::owner_all);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "could not become another user";
  EXPECT_EQ(message, "2 stage path " + dir_ + "/ds: cannot read sub: Permission denied");
}

}  // namespace
}  // namespace sat::datastore
