#include "tune/code_change.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

KnobState Injected(std::string name, KnobValue own) {
  KnobState k;
  k.spec = *DefaultKnob(name, {8, true});
  k.spec.delivery = Delivery::kInjected;
  k.exposed = true;
  k.script_value = std::move(own);
  return k;
}

SearchOutcome Outcome() {
  SearchOutcome s;
  s.knobs = {Injected("num_workers", 0), Injected("amp", "off"), Injected("batch_size", 64),
             Injected("pin_memory", "off")};
  s.loader_site = "train.py:57";
  return s;
}

TEST(CodeChange, SpellsOutTheDataLoaderCallAndAutocast) {
  auto changes = CodeChanges(Outcome(), {{"num_workers", 4}, {"amp", "bf16"}, {"batch_size", 64}, {"pin_memory", "on"}},
                             true);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].Text(), "DataLoader at train.py:57: DataLoader(..., num_workers=4, pin_memory=True)");
  EXPECT_EQ(changes[0].knobs, (std::vector<std::string>{"num_workers", "pin_memory"}));  // batch_size unchanged
  EXPECT_EQ(changes[1].Text(), R"(around the model's forward: with torch.autocast("cuda", dtype=torch.bfloat16):)");
}

TEST(CodeChange, DeviceTypeAndDtypeFollowTheMachineAndTheChoice) {
  auto cpu = CodeChanges(Outcome(), {{"amp", "bf16"}}, false);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].code, R"(with torch.autocast("cpu", dtype=torch.bfloat16):)");
  auto fp16 = CodeChanges(Outcome(), {{"amp", "fp16"}}, true);
  EXPECT_EQ(fp16[0].code, R"(with torch.autocast("cuda", dtype=torch.float16): (keep the script's GradScaler))");
}

TEST(CodeChange, NothingWhenTheScriptsOwnValuesStayOrTheKnobsAreFlags) {
  EXPECT_TRUE(CodeChanges(Outcome(), {{"num_workers", 0}, {"amp", "off"}, {"batch_size", 64}}, true).empty());
  SearchOutcome flags = Outcome();
  for (auto& k : flags.knobs) k.spec.delivery = Delivery::kPlaceholder;
  EXPECT_TRUE(CodeChanges(flags, {{"num_workers", 4}, {"amp", "bf16"}}, true).empty());
  SearchOutcome unknown_site = Outcome();
  unknown_site.loader_site.clear();
  EXPECT_EQ(CodeChanges(unknown_site, {{"num_workers", 2}}, true)[0].Text(),
            "the training DataLoader: DataLoader(..., num_workers=2)");
}

TEST(CodeChange, LoaderArgumentsAreDataLoadersOwnNames) {
  KnobSpec k = *DefaultKnob("workers", {8, false});
  EXPECT_EQ(LoaderArgument(k), "num_workers");
  k.name = "prefetch_factor";
  k.role = KnobRole::kOther;
  EXPECT_EQ(LoaderArgument(k), "prefetch_factor");
  k.name = "lr";
  EXPECT_EQ(LoaderArgument(k), "");
}

}  // namespace
}  // namespace sat::tune
