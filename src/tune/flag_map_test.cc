#include "tune/flag_map.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

measure::FlagOption Option(std::string dest, std::vector<std::string> strings, nlohmann::json value) {
  return measure::FlagOption{std::move(dest), std::move(strings), "value", value, value, false};
}

std::vector<KnobState> Injected() {
  MachineFacts m{8, false};
  std::vector<KnobState> knobs;
  for (auto [name, value] : std::vector<std::pair<std::string, KnobValue>>{{"workers", 0}, {"batch_size", 64}}) {
    KnobState k{*DefaultKnob(name, m), true, value, ""};
    k.spec.delivery = Delivery::kInjected;
    knobs.push_back(k);
  }
  return knobs;
}

TEST(FlagMap, NamesThatFitARole) {
  EXPECT_EQ(OptionRole(Option("j", {"-j"}, 0)), KnobRole::kWorkers);
  EXPECT_EQ(OptionRole(Option("num_workers", {"--num-workers"}, 0)), KnobRole::kWorkers);
  EXPECT_EQ(OptionRole(Option("bs", {"--bs"}, 0)), KnobRole::kBatchSize);
  EXPECT_EQ(OptionRole(Option("batch_size", {"--batch_size"}, 0)), KnobRole::kBatchSize);
  EXPECT_EQ(OptionRole(Option("x", {"--mixed-precision"}, "off")), KnobRole::kAmp);
  EXPECT_EQ(OptionRole(Option("pin_memory", {"--pin-memory"}, false)), KnobRole::kPinMemory);
  EXPECT_EQ(OptionRole(Option("epochs", {"--epochs"}, 0)), KnobRole::kOther);
}

TEST(FlagMap, ExactlyOneFittingOptionWithTheValueIsACandidate) {
  std::vector<std::string> notes;
  auto c = FindCandidates(Injected(), {Option("workers", {"-j", "--workers"}, 0), Option("batch_size", {"--bs"}, 64),
                                       Option("epochs", {"--epochs"}, 64)},
                          &notes);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].knob, "workers");
  EXPECT_EQ(c[0].flag.option, "--workers");
  EXPECT_EQ(c[0].proof, 1);
  EXPECT_EQ(c[1].knob, "batch_size");
  EXPECT_EQ(c[1].proof, 32);
  EXPECT_TRUE(notes.empty());

  // A value that is not the loader's: no candidate. Two fitting options with it: ambiguous, none.
  c = FindCandidates(Injected(), {Option("workers", {"--workers"}, 4), Option("bs", {"--bs"}, 64),
                                  Option("batch", {"--batch"}, 64)},
                     &notes);
  EXPECT_TRUE(c.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "batch_size: options --bs, --batch all carry the script's value 64, so none is taken as its flag");
}

TEST(FlagMap, ProofValuesStayInRange) {
  MachineFacts m{2, false};
  EXPECT_EQ(ProofValue(*DefaultKnob("workers", m), 2), 1);  // at the top: one fewer
  EXPECT_EQ(ProofValue(*DefaultKnob("batch_size", m), 16), 32);  // at the bottom: twice
  EXPECT_EQ(ProofValue(*DefaultKnob("amp", m), "off"), "bf16");
  EXPECT_EQ(ProofValue(*DefaultKnob("pin_memory", m), "on"), "off");
}

TEST(FlagMap, ProvenOnlyWhenTheLoaderFollows) {
  FlagCandidate c{"workers", FlagBinding{"--workers", {"--workers"}, FlagForm::kValue, 0}, 1};
  Trial t;
  t.exit_class = run::ExitClass::kStopped;
  t.samples_per_s = 100;
  t.knobs_seen["workers"] = 1;
  EXPECT_EQ(Unproven(c, t), "");
  t.knobs_seen["workers"] = 0;
  EXPECT_EQ(Unproven(c, t), "with --workers 1 the script still ran with workers=0");
  t.knobs_seen.clear();
  t.exit_class = run::ExitClass::kFailed;
  EXPECT_EQ(Unproven(c, t).rfind("the run with --workers 1 reported no training DataLoader (failed", 0), 0u);
}

}  // namespace
}  // namespace sat::tune
