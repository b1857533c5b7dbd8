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

// Where the Python side is found: the override, else a copy beside the binary (a checkout's build/, an install, a
// carried copy), else the build's folder; and what is said when none holds it.
TEST(HelperPythonDir, OverrideThenBesideTheBinaryThenBuild) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(testing::TempDir()) / ("helperdir_" + std::to_string(getpid()));
  fs::remove_all(root);
  auto helper_in = [](const fs::path& dir) {
    fs::create_directories(dir / "saturate");
    std::ofstream(dir / "sitecustomize.py") << "\n";
  };
  auto dir_of = [](const HelperDir& h) { return h.found ? h.dir : "not found: " + h.dir; };
  const fs::path built = root / "checkout" / "python";
  const fs::path bin = root / "opt" / "bin";
  fs::create_directories(bin);
  // Nothing anywhere: the build's folder, not found, after the three places beside the binary.
  HelperDir none = FindHelperPythonDir(std::nullopt, built.string(), bin.string());
  EXPECT_EQ(dir_of(none), "not found: " + built.string());
  EXPECT_EQ(none.looked_in, (V{(bin / "python").string(), (root / "opt" / "python").string(),
                               (root / "opt" / "share" / "saturate" / "python").string(), built.string()}));
  Status said = CheckHelperDir(none);
  ASSERT_FALSE(said);
  EXPECT_NE(said.message().find("is in none of " + (bin / "python").string()), std::string::npos) << said.message();
  EXPECT_NE(said.message().find("pip install --force-reinstall"), std::string::npos) << said.message();
  // The build's folder when nothing is beside the binary (a build tree outside the checkout).
  helper_in(built);
  EXPECT_EQ(dir_of(FindHelperPythonDir(std::nullopt, built.string(), bin.string())), built.string());
  EXPECT_EQ(dir_of(FindHelperPythonDir(std::nullopt, built.string(), "")), built.string());
  // A copy in ../share/saturate/python beside the binary (the wheel's layout) wins over the build's folder: an
  // installed binary runs with its own copy.
  helper_in(root / "opt" / "share" / "saturate" / "python");
  EXPECT_EQ(dir_of(FindHelperPythonDir(std::nullopt, built.string(), bin.string())),
            (root / "opt" / "share" / "saturate" / "python").string());
  EXPECT_TRUE(CheckHelperDir(FindHelperPythonDir(std::nullopt, built.string(), bin.string())));
  // ../python (build/saturate beside a checkout's python/) comes before it.
  helper_in(root / "opt" / "python");
  EXPECT_EQ(dir_of(FindHelperPythonDir(std::nullopt, built.string(), bin.string())),
            (root / "opt" / "python").string());
  // The override wins; one that holds no helper is named as the problem.
  EXPECT_EQ(FindHelperPythonDir(built.string(), "/x", "").dir, built.string());
  HelperDir wrong = FindHelperPythonDir("/over/here", built.string(), bin.string());
  EXPECT_EQ(dir_of(wrong), "not found: /over/here");
  EXPECT_NE(CheckHelperDir(wrong).message().find("SATURATE_PYTHON_DIR=/over/here does not hold"), std::string::npos);
  // An empty override is no override.
  EXPECT_EQ(dir_of(FindHelperPythonDir(std::string(), built.string(), bin.string())),
            (root / "opt" / "python").string());
  fs::remove_all(root);
  // This build's own answer is the checkout's python/ (the tests run from it).
  EXPECT_TRUE(fs::exists(fs::path(HelperPythonDir()) / "sitecustomize.py")) << HelperPythonDir();
  EXPECT_TRUE(CheckHelperPythonDir());
}

}  // namespace
}  // namespace sat::run
