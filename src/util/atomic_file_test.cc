#include "util/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sat {
namespace {

namespace fs = std::filesystem;

struct TempFolder {
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "saturate-atomic-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempFolder() { fs::remove_all(path); }
  std::string path;
};

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteFileAtomically, ReplacesTheWholeFileAndLeavesNoTemporary) {
  TempFolder dir;
  const std::string path = dir.path + "/results.json";
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 1}\n"));
  ASSERT_TRUE(WriteFileAtomically(path, "{\"a\": 2}\n"));
  EXPECT_EQ(Read(path), "{\"a\": 2}\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

TEST(WriteFileAtomically, PrivateFilesAreTheOwnersAlone) {
  TempFolder dir;
  const std::string path = dir.path + "/job.json";
  // A temporary left by an earlier process with this pid must not pass its bits on.
  std::ofstream(path + ".tmp." + std::to_string(getpid())) << "old";
  chmod((path + ".tmp." + std::to_string(getpid())).c_str(), 0666);
  ASSERT_TRUE(WriteFileAtomically(path, "{}", kPrivateFileMode));
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A write that cannot finish (here: the folder is gone) names the file and leaves the last good one alone.
TEST(WriteFileAtomically, LinksPlantedAtItsNamesAreNotFollowed) {
  TempFolder dir;
  const std::string precious = dir.path + "/precious.txt";
  std::ofstream(precious) << "the user's data";
  const std::string path = dir.path + "/results.json";
  ASSERT_EQ(symlink(precious.c_str(), (path + ".tmp." + std::to_string(getpid())).c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "{}"));
  EXPECT_EQ(Read(precious), "the user's data");
  EXPECT_EQ(Read(path), "{}");

  // A link at the file's own name is replaced by the file, its target untouched.
  const std::string linked = dir.path + "/report.html";
  ASSERT_EQ(symlink(precious.c_str(), linked.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(linked, "<html>"));
  EXPECT_EQ(Read(precious), "the user's data");
  EXPECT_FALSE(fs::is_symlink(linked));
}

TEST(WriteFileAtomically, AFailureKeepsTheLastGoodFile) {
  TempFolder dir;
  const std::string path = dir.path + "/probe.json";
  ASSERT_TRUE(WriteFileAtomically(path, "good"));
  Status missing = WriteFileAtomically(dir.path + "/no/such/x.json", "{}");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find(dir.path + "/no/such/x.json"), std::string::npos) << missing.message();
  EXPECT_EQ(Read(path), "good");
}

}  // namespace
}  // namespace sat
