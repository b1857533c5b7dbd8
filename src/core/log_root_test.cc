#include "core/log_root.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sat::core {
namespace {

namespace fs = std::filesystem;

TEST(LogRoot, ATemporaryFolderGoesUnlessKept) {
  std::string path;
  {
    auto logs = LogRoot::Create("", "", "probe");
    ASSERT_TRUE(logs) << logs.error().message;
    path = logs->path();
    EXPECT_TRUE(logs->temporary());
    EXPECT_NE(fs::path(path).filename().string().find("saturate-probe-"), std::string::npos) << path;
    std::ofstream(fs::path(path) / "stdout.log") << "x";
  }
  EXPECT_FALSE(fs::exists(path));
  {
    auto logs = LogRoot::Create("", "", "tune");
    ASSERT_TRUE(logs);
    path = logs->path();
    logs->Keep();
  }
  EXPECT_TRUE(fs::exists(path));
  fs::remove_all(path);
}

TEST(LogRoot, OutIsCreatedAndNeverRemoved) {
  fs::path out = fs::temp_directory_path() / ("log_root_test_" + std::to_string(getpid()));
  {
    auto logs = LogRoot::Create(out.string(), "trials", "tune");
    ASSERT_TRUE(logs) << logs.error().message;
    EXPECT_EQ(logs->path(), (out / "trials").string());
    EXPECT_FALSE(logs->temporary());
  }
  EXPECT_TRUE(fs::is_directory(out / "trials"));
  fs::remove_all(out);
}

TEST(LogRoot, AnOutThatCannotBeMadeNamesOut) {
  auto logs = LogRoot::Create("/proc/version/sub", "", "probe");
  ASSERT_FALSE(logs);
  EXPECT_NE(logs.error().message.find("cannot create --out /proc/version/sub"), std::string::npos)
      << logs.error().message;
}

}  // namespace
}  // namespace sat::core
