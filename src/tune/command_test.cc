#include "tune/command.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

std::vector<KnobSpec> Knobs() {
  auto ks = ResolveKnobs({}, {"train.py", "--bs", "{batch_size}", "--tag=b{batch_size}"}, {4, true});
  return *ks;
}

TEST(Command, FillsPlaceholdersAndTheEnvironment) {
  RenderedRun run = RenderRun({"python3", "train.py", "--bs", "{batch_size}", "--tag=b{batch_size}x{batch_size}"},
                              Knobs(), {{"batch_size", 128}, {"workers", 2}, {"amp", "bf16"},
                                        {"expandable_segments", "on"}});
  EXPECT_EQ(run.argv, (std::vector<std::string>{"python3", "train.py", "--bs", "128", "--tag=b128x128"}));
  EXPECT_EQ(run.env.at("SATURATE_KNOBS"), R"({"amp":"bf16","workers":2})");
  EXPECT_EQ(run.env.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
}

TEST(Command, LeavesTheScriptOnItsDefaultsWhenNothingIsSet) {
  RenderedRun run = RenderRun({"python3", "train.py", "--bs", "{batch_size}"}, Knobs(), {});
  EXPECT_EQ(run.argv[3], "32");  // a placeholder always needs a value: its start
  EXPECT_TRUE(run.env.empty());
  RenderedRun off = RenderRun({"t.py"}, Knobs(), {{"expandable_segments", "off"}});
  EXPECT_EQ(off.env.count("PYTORCH_CUDA_ALLOC_CONF"), 0u);
}

TEST(Command, TheBatchSizeOfARunIsItsSamplesPerStep) {
  std::vector<KnobSpec> knobs = Knobs();  // batch_size is a placeholder
  EXPECT_EQ(RenderRun({"t.py", "-b", "{batch_size}"}, knobs, {{"batch_size", 96}}).batch_size, 96);
  EXPECT_EQ(RenderRun({"t.py", "-b", "{batch_size}"}, knobs, {}).batch_size, 32);  // the placeholder's start
  for (auto& k : knobs)
    if (k.role == KnobRole::kBatchSize) k.delivery = Delivery::kHelper;
  EXPECT_EQ(RenderRun({"t.py"}, knobs, {{"batch_size", 48}}).batch_size, 48);
  EXPECT_FALSE(RenderRun({"t.py"}, knobs, {}).batch_size);  // the script's own, unknown here
}

TEST(Command, PasteableLine) {
  std::string line = PasteableCommand({"/usr/bin/python3", "train.py", "--bs", "{batch_size}"}, false, Knobs(),
                                      {{"batch_size", 96}, {"workers", 2}}, "/opt/saturate/python");
  EXPECT_EQ(line, R"(SATURATE_KNOBS='{"workers":2}' PYTHONPATH=/opt/saturate/python /usr/bin/python3 train.py --bs 96)");
  std::string plain = PasteableCommand({"train.py", "--bs", "{batch_size}"}, false, Knobs(), {{"batch_size", 8}}, "/p");
  EXPECT_EQ(plain, "train.py --bs 8");
  std::string shell = PasteableCommand({"python3 train.py --bs {batch_size} > log.txt"}, true, Knobs(),
                                       {{"batch_size", 8}}, "/p");
  EXPECT_EQ(shell, "sh -c 'python3 train.py --bs 8 > log.txt'");
}

TEST(Command, PasteableLineLeavesInjectedKnobsToTheCodeChange) {
  std::vector<KnobSpec> knobs = Knobs();
  for (auto& k : knobs)
    if (k.name == "workers") k.delivery = Delivery::kInjected;
  std::string line = PasteableCommand({"python3", "train.py", "--bs", "{batch_size}"}, false, knobs,
                                      {{"batch_size", 96}, {"workers", 4}, {"amp", "bf16"}}, "/p");
  EXPECT_EQ(line, R"(SATURATE_KNOBS='{"amp":"bf16"}' PYTHONPATH=/p python3 train.py --bs 96)");
  for (auto& k : knobs)
    if (k.name == "amp") k.delivery = Delivery::kInjected;
  EXPECT_EQ(PasteableCommand({"python3", "train.py", "--bs", "{batch_size}"}, false, knobs,
                             {{"batch_size", 96}, {"workers", 4}, {"amp", "bf16"}}, "/p"),
            "python3 train.py --bs 96");
  // Under saturate the injected knobs still travel in SATURATE_KNOBS.
  EXPECT_EQ(RenderRun({"t.py"}, knobs, {{"workers", 4}}).env.at("SATURATE_KNOBS"), R"({"workers":4})");
}

}  // namespace
}  // namespace sat::tune
