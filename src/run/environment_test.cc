#include "run/environment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sat::run {
namespace {

using V = std::vector<std::string>;

TEST(Environment, AddsAndOverrides) {
  V env = BuildEnvironment({"A=1", "B=2"}, {{"B", "two"}, {"C", "x=y"}}, {});
  EXPECT_EQ(env, (V{"A=1", "B=two", "C=x=y"}));
  EXPECT_EQ(LookupVar(env, "C"), "x=y");
  EXPECT_EQ(LookupVar(env, "D"), std::nullopt);
  EXPECT_EQ(LookupVar({"AB=1"}, "A"), std::nullopt);
}

TEST(Environment, PrependsToPythonPath) {
  EXPECT_EQ(LookupVar(BuildEnvironment({"PYTHONPATH=/old"}, {}, {"/a", "/b"}), "PYTHONPATH"), "/a:/b:/old");
  EXPECT_EQ(LookupVar(BuildEnvironment({}, {}, {"/a"}), "PYTHONPATH"), "/a");
  EXPECT_EQ(LookupVar(BuildEnvironment({"PYTHONPATH="}, {}, {"/a"}), "PYTHONPATH"), "/a");
  // An explicit PYTHONPATH from the caller replaces saturate's, and the prepend still goes first.
  EXPECT_EQ(LookupVar(BuildEnvironment({"PYTHONPATH=/old"}, {{"PYTHONPATH", "/mine"}}, {"/a"}), "PYTHONPATH"),
            "/a:/mine");
}

TEST(Environment, SnapshotsOurOwnEnvironment) {
  auto env = CurrentEnvironment();
  EXPECT_FALSE(env.empty());
  EXPECT_EQ(LookupVar(env, "PATH"), std::string(getenv("PATH")));
}

// Where the Python side is found: the override, else the build's own folder while it holds the helper, else a copy
// beside the binary (carried to another machine, or installed), else the build's folder as the last word.
TEST(HelperPythonDir, OverrideThenBuildThenBesideTheBinary) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(testing::TempDir()) / ("helperdir_" + std::to_string(getpid()));
  fs::remove_all(root);
  auto helper_in = [](const fs::path& dir) {
    fs::create_directories(dir / "saturate");
    std::ofstream(dir / "sitecustomize.py") << "\n";
  };
  const fs::path built = root / "checkout" / "python";
  const fs::path bin = root / "opt" / "bin";
  fs::create_directories(bin);
  EXPECT_EQ(FindHelperPythonDir("/over/here", built.string(), bin.string()), "/over/here");
  // Nothing anywhere: the build's folder, as before.
  EXPECT_EQ(FindHelperPythonDir(std::nullopt, built.string(), bin.string()), built.string());
  // A copy in ../share/saturate/python beside the binary (an install), the build's folder gone.
  helper_in(root / "opt" / "share" / "saturate" / "python");
  EXPECT_EQ(FindHelperPythonDir(std::nullopt, built.string(), bin.string()),
            (root / "opt" / "share" / "saturate" / "python").string());
  // ../python (a carried checkout: build/saturate beside python/) comes before it.
  helper_in(root / "opt" / "python");
  EXPECT_EQ(FindHelperPythonDir(std::nullopt, built.string(), bin.string()), (root / "opt" / "python").string());
  // The build's own folder, while it holds the helper, wins over copies.
  helper_in(built);
  EXPECT_EQ(FindHelperPythonDir(std::nullopt, built.string(), bin.string()), built.string());
  // An empty override is no override.
  EXPECT_EQ(FindHelperPythonDir(std::string(), built.string(), bin.string()), built.string());
  fs::remove_all(root);
  // This build's own answer is the checkout's python/ (the tests run from it).
  EXPECT_TRUE(fs::exists(fs::path(HelperPythonDir()) / "sitecustomize.py")) << HelperPythonDir();
}

}  // namespace
}  // namespace sat::run
