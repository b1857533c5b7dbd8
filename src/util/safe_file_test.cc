#include "util/safe_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "util/test_dir.h"

namespace sat {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const UniqueFd& fd, const std::string& text) {
  ASSERT_EQ(write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

TEST(SafeFile, ReplacesAppendsAndCreatesItsOwnFiles) {
  TempDir dir;
  const std::string path = dir.File("log");
  {
    auto fd = OpenForWriting(path, WriteMode::kReplace);
    ASSERT_TRUE(fd) << fd.error().message;
    Write(*fd, "first\n");
  }
  {
    auto fd = OpenForWriting(path, WriteMode::kAppend);
    ASSERT_TRUE(fd) << fd.error().message;
    Write(*fd, "second\n");
  }
  EXPECT_EQ(Read(path), "first\nsecond\n");
  {
    auto fd = OpenForWriting(path, WriteMode::kReplace);
    ASSERT_TRUE(fd);
    Write(*fd, "again\n");
  }
  EXPECT_EQ(Read(path), "again\n");
  EXPECT_FALSE(OpenForWriting(path, WriteMode::kNew)) << "kNew: anything there is an error";
  auto fresh = OpenForWriting(dir.File("new"), WriteMode::kNew, 0600);
  ASSERT_TRUE(fresh);
  struct stat st {};
  ASSERT_EQ(stat(dir.File("new").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(fcntl(fresh->get(), F_GETFD) & FD_CLOEXEC, 0) << "a run never inherits it";
  auto stream = OpenStreamForWriting(dir.File("csv"), WriteMode::kReplace);
  ASSERT_TRUE(stream);
  std::fputs("a,b\n", *stream);
  std::fclose(*stream);
  EXPECT_EQ(Read(dir.File("csv")), "a,b\n");
}

// A link planted at the name is refused in every mode, and its target is left as it was.
TEST(SafeFile, NeverWritesThroughAPlantedLink) {
  TempDir dir;
  const std::string target = dir.File("victim"), link = dir.File("stdout.log");
  std::ofstream(target) << "precious\n";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  for (WriteMode mode : {WriteMode::kNew, WriteMode::kReplace, WriteMode::kAppend}) {
    auto fd = OpenForWriting(link, mode);
    ASSERT_FALSE(fd);
    if (mode != WriteMode::kNew) {
      EXPECT_NE(fd.error().message.find("is a symbolic link, which saturate does not follow"), std::string::npos)
          << fd.error().message;
    }
  }
  EXPECT_EQ(Read(target), "precious\n");
  // A dangling link too: it would otherwise create the file where it points.
  ASSERT_EQ(symlink(dir.File("elsewhere").c_str(), dir.File("dangling").c_str()), 0);
  EXPECT_FALSE(OpenForWriting(dir.File("dangling"), WriteMode::kReplace));
  EXPECT_NE(access(dir.File("elsewhere").c_str(), F_OK), 0);
}

TEST(SafeFile, RefusesWhatIsNotARegularFileOfOurs) {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto fd = OpenForWriting(fifo, WriteMode::kReplace);  // must not hang waiting for a reader
  ASSERT_FALSE(fd);
  EXPECT_NE(fd.error().message.find("not a regular file"), std::string::npos) << fd.error().message;
  EXPECT_FALSE(OpenForWriting(dir.path(), WriteMode::kAppend)) << "a folder";
  if (geteuid() == 0) {
    // Another user's file (as root, one handed to nobody): refused, untouched.
    const std::string theirs = dir.File("theirs");
    std::ofstream(theirs) << "theirs\n";
    ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
    auto other = OpenForWriting(theirs, WriteMode::kReplace);
    ASSERT_FALSE(other);
    EXPECT_NE(other.error().message.find("belongs to user 65534, not to you"), std::string::npos);
    EXPECT_EQ(Read(theirs), "theirs\n");
  }
}

}  // namespace
}  // namespace sat
