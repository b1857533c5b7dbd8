#include "run/environment.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sat::run
