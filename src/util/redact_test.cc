#include "util/redact.h"

#include <gtest/gtest.h>

namespace sat {
namespace {

using V = std::vector<std::string>;

TEST(Redact, SecretNamesByWord) {
  for (const char* name : {"--api-key", "API_TOKEN", "--wandb-secret", "DB_PASSWORD", "--Key"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"--lr", "BATCH_SIZE", "--epochs", "HOME"}) EXPECT_FALSE(IsSecretName(name)) << name;
}

TEST(Redact, ArgvHidesValuesOfSecretArguments) {
  EXPECT_EQ(RedactArgv({"python3", "train.py", "--api-key=abc", "--lr", "0.1"}),
            (V{"python3", "train.py", "--api-key=***", "--lr", "0.1"}));
  EXPECT_EQ(RedactArgv({"python3", "train.py", "--api-key", "abc", "--lr", "0.1"}),
            (V{"python3", "train.py", "--api-key", "***", "--lr", "0.1"}));
  EXPECT_EQ(RedactArgv({"env", "API_TOKEN=xyz", "python3", "t.py"}), (V{"env", "API_TOKEN=***", "python3", "t.py"}));
  // A secret flag followed by another flag has no value to hide.
  EXPECT_EQ(RedactArgv({"t.py", "--use-token", "--lr", "1"}), (V{"t.py", "--use-token", "--lr", "1"}));
}

TEST(Redact, CommandLineKeepsItsSpacing) {
  EXPECT_EQ(RedactCommandLine("python3 t.py --api-key abc  --password=hunter2 --lr 0.1"),
            "python3 t.py --api-key ***  --password=*** --lr 0.1");
  EXPECT_EQ(RedactCommandLine("WANDB_API_KEY=k python3 t.py"), "WANDB_API_KEY=*** python3 t.py");
}

TEST(Redact, ACommandRunByTheShellIsRedactedAsItsLine) {
  EXPECT_EQ(RedactCommand({"t.py", "--api-key", "abc"}, false), (V{"t.py", "--api-key", "***"}));
  EXPECT_EQ(RedactCommand({"python3 t.py --api-key", "abc"}, true), (V{"python3 t.py --api-key ***"}));
  EXPECT_EQ(RedactCommand({"python3 t.py", "--lr 1"}, true), (V{"python3 t.py", "--lr 1"}));
}

}  // namespace
}  // namespace sat
