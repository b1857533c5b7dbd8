#include "tune/command_identity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tune/cache.h"

namespace sat::tune {
namespace {

namespace fs = std::filesystem;

// Runs `body` with the working directory in a new temporary folder, then goes back and removes it.
template <class F>
void InTempFolder(F body) {
  const fs::path back = fs::current_path();
  std::string pattern = (fs::temp_directory_path() / "saturate-identity-XXXXXX").string();
  const fs::path dir = mkdtemp(pattern.data());
  fs::current_path(dir);
  body(dir);
  fs::current_path(back);
  fs::remove_all(dir);
}

TEST(CommandIdentity, AnEditedScriptIsAnotherCommand) {
  InTempFolder([](const fs::path& dir) {
    std::ofstream("train.py") << "print('v1')\n";
    const std::vector<std::string> argv = {"/usr/bin/python3", "train.py", "--lr", "0.1"};
    const CommandIdentity before = IdentifyCommand(argv, false);
    EXPECT_EQ(before.cwd, fs::current_path().string());
    EXPECT_EQ(before.script, "train.py");
    EXPECT_FALSE(before.script_digest.empty());
    std::ofstream("train.py") << "print('v2')\n";
    const CommandIdentity after = IdentifyCommand(argv, false);
    EXPECT_NE(before.script_digest, after.script_digest);
    // The same request, the same argv: the trial keys differ with the script.
    const TrialRequest request;
    EXPECT_NE(TrialKey(argv, false, "", request, {}, before), TrialKey(argv, false, "", request, {}, after));
  });
}

TEST(CommandIdentity, AnotherFolderIsAnotherCommand) {
  const std::vector<std::string> argv = {"sh", "-c", "true"};
  CommandIdentity here, there;
  InTempFolder([&](const fs::path&) { here = IdentifyCommand(argv, false); });
  InTempFolder([&](const fs::path&) { there = IdentifyCommand(argv, false); });
  EXPECT_NE(here.cwd, there.cwd);
  EXPECT_TRUE(here.script.empty()) << "no argument names a file";
  EXPECT_NE(TrialKey(argv, false, "", {}, {}, here), TrialKey(argv, false, "", {}, {}, there));
}

TEST(CommandIdentity, ShellCommandsNameTheirScriptToo) {
  InTempFolder([](const fs::path&) {
    std::ofstream("train.py") << "pass\n";
    EXPECT_EQ(IdentifyCommand({"python3 train.py --epochs 1"}, true).script, "train.py");
  });
}

// Debian's python3 with python3-torch: the version is read from torch/version.py without importing torch.
TEST(CommandIdentity, FindsTheTorchOfTheCommandsPython) {
  if (!fs::exists("/usr/lib/python3/dist-packages/torch/version.py")) GTEST_SKIP() << "no Debian torch";
  const CommandIdentity id = IdentifyCommand({"/usr/bin/python3", "-c", "pass"}, false);
  EXPECT_EQ(id.torch_version.rfind("1.", 0), 0u) << id.torch_version;
  EXPECT_TRUE(IdentifyCommand({"sh", "-c", "true"}, false).torch_version.empty());
}

// An upgraded torch (the same script, folder and argv) never reuses the old trials.
TEST(CommandIdentity, AnotherTorchIsAnotherCommand) {
  const std::vector<std::string> argv = {"python3", "train.py"};
  CommandIdentity old_torch{"/work", "train.py", "d1", "1.13.1"};
  CommandIdentity new_torch = old_torch;
  new_torch.torch_version = "2.11.0+cu130";
  EXPECT_NE(TrialKey(argv, false, "", {}, {}, old_torch), TrialKey(argv, false, "", {}, {}, new_torch));
  EXPECT_EQ(TrialKey(argv, false, "", {}, {}, old_torch), TrialKey(argv, false, "", {}, {}, old_torch));
}

}  // namespace
}  // namespace sat::tune
