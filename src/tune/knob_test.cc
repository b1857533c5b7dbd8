#include "tune/knob.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sat::tune {
namespace {

using ::testing::HasSubstr;

const MachineFacts kCpu{4, false};
const MachineFacts kGpu{16, true};

TEST(Knob, ParsesRangesChoicesFixedValuesAndDefaults) {
  auto r = ParseKnobFlag("batch_size=16:1024", kCpu);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kind, KnobKind::kRange);
  EXPECT_EQ(r->lo, 16);
  EXPECT_EQ(r->hi, 1024);
  EXPECT_EQ(r->role, KnobRole::kBatchSize);
  EXPECT_TRUE(r->from_flag);

  auto c = ParseKnobFlag("amp=off, bf16,fp16,bf16", kCpu);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->choices, (std::vector<std::string>{"off", "bf16", "fp16"}));
  EXPECT_EQ(c->RangeText(), "off,bf16,fp16");

  auto fixed = ParseKnobFlag("workers=3", kCpu);
  ASSERT_TRUE(fixed);
  EXPECT_EQ(fixed->kind, KnobKind::kRange);
  EXPECT_EQ(fixed->lo, 3);
  EXPECT_EQ(fixed->hi, 3);

  auto other = ParseKnobFlag("lr_schedule=cosine", kCpu);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->role, KnobRole::kOther);
  EXPECT_EQ(other->choices, std::vector<std::string>{"cosine"});

  auto workers = ParseKnobFlag("workers", kCpu);
  ASSERT_TRUE(workers);
  EXPECT_EQ(workers->RangeText(), "0:4");
}

TEST(Knob, RejectsBadFlagsWithTheReason) {
  auto expect_error = [](std::string_view flag, std::string_view want) {
    auto r = ParseKnobFlag(flag, kCpu);
    ASSERT_FALSE(r) << flag;
    EXPECT_EQ(r.error().exit_code, kExitUsage);
    EXPECT_THAT(r.error().message, HasSubstr(std::string(want))) << flag;
  };
  expect_error("batch_size=64:16", "above");
  expect_error("batch_size=a:b", "two integers");
  expect_error("batch_size=off,on", "takes integers");
  expect_error("amp=1:3", "takes choices");
  expect_error("batch_size=0:8", "at least 1");
  expect_error("workers=-1:2", "negative");
  expect_error("2bad=1:2", "not a knob name");
  expect_error("dropout", "needs a range");
  expect_error("x=", "no values");
  expect_error("x=a,,b", "empty choice");
}

TEST(Knob, DefaultsFollowTheMachine) {
  auto names = [](const std::vector<KnobSpec>& ks) {
    std::vector<std::string> out;
    for (const auto& k : ks) out.push_back(k.name);
    return out;
  };
  auto cpu = DefaultKnobs(kCpu);
  EXPECT_EQ(names(cpu), (std::vector<std::string>{"batch_size", "workers", "amp", "preload"}));
  EXPECT_EQ(FindKnob(cpu, "workers")->hi, 4);
  EXPECT_EQ(FindKnob(cpu, "amp")->RangeText(), "off,bf16");
  EXPECT_EQ(FindKnob(cpu, "batch_size")->RangeText(), "16:1024");

  auto gpu = DefaultKnobs(kGpu);
  EXPECT_NE(FindKnob(gpu, "pin_memory"), nullptr);
  EXPECT_NE(FindKnob(gpu, "expandable_segments"), nullptr);
  EXPECT_EQ(FindKnob(gpu, "amp")->RangeText(), "off,bf16,fp16");
  EXPECT_EQ(FindKnob(gpu, "batch_size")->hi, 4096);
}

TEST(Knob, FindsIdentifierPlaceholdersOnly) {
  std::vector<std::string> argv = {"python3", "train.py", "--bs={batch_size}", "--fmt", "{}", "{0}",
                                   "--w", "{workers}", "--again={batch_size}{dropout}"};
  EXPECT_EQ(FindPlaceholders(argv), (std::vector<std::string>{"batch_size", "workers", "dropout"}));
}

TEST(Knob, ResolvesDeliveryAndOrder) {
  auto ks = ResolveKnobs({}, {"python3", "train.py", "--batch-size", "{batch_size}"}, kGpu);
  ASSERT_TRUE(ks) << ks.error().message;
  EXPECT_EQ(FindKnob(*ks, "batch_size")->delivery, Delivery::kPlaceholder);
  EXPECT_EQ(FindKnob(*ks, "workers")->delivery, Delivery::kHelper);
  EXPECT_EQ(FindKnob(*ks, "expandable_segments")->delivery, Delivery::kEnvironment);
  // Search order: workers, amp, batch size, allocator, pin memory, preload.
  EXPECT_EQ(ks->front().name, "workers");
  EXPECT_EQ(ks->back().name, "preload");

  // With flags, only those knobs (plus the command's placeholders).
  auto flagged = ResolveKnobs({"dropout=0.1,0.3", "workers=0:2"}, {"train.py", "--amp", "{amp}"}, kCpu);
  ASSERT_TRUE(flagged) << flagged.error().message;
  ASSERT_EQ(flagged->size(), 3u);
  EXPECT_EQ((*flagged)[0].name, "workers");
  EXPECT_EQ((*flagged)[1].name, "amp");
  EXPECT_EQ((*flagged)[1].delivery, Delivery::kPlaceholder);
  EXPECT_EQ((*flagged)[2].name, "dropout");
}

TEST(Knob, ResolveRejectsUnknownPlaceholdersAndDuplicates) {
  auto unknown = ResolveKnobs({}, {"train.py", "--lr", "{lr}"}, kCpu);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("--knob lr=LO:HI"));
  auto twice = ResolveKnobs({"workers=0:2", "workers=1:3"}, {"t.py"}, kCpu);
  ASSERT_FALSE(twice);
  EXPECT_THAT(twice.error().message, HasSubstr("twice"));
  auto same_role = ResolveKnobs({"bs=1:8", "batch_size=1:8"}, {"t.py"}, kCpu);
  ASSERT_FALSE(same_role);
  EXPECT_THAT(same_role.error().message, HasSubstr("same part"));
}

TEST(Knob, StartValuesAndMembership) {
  KnobSpec batch = *ParseKnobFlag("batch_size=64:512", kCpu);
  EXPECT_EQ(batch.Start(), KnobValue(64));  // 32 clamped into the range
  EXPECT_EQ(ParseKnobFlag("batch_size=8:512", kCpu)->Start(), KnobValue(32));
  EXPECT_EQ(ParseKnobFlag("amp=bf16,off", kCpu)->Start(), KnobValue("bf16"));
  EXPECT_TRUE(batch.Contains(128));
  EXPECT_FALSE(batch.Contains(1024));
  EXPECT_FALSE(batch.Contains("128"));
  EXPECT_TRUE(ParseKnobFlag("amp", kCpu)->Contains("bf16"));
}

TEST(Knob, NormalizesWhatTheScriptReported) {
  KnobSpec pin = *DefaultKnob("pin_memory", kGpu);
  EXPECT_EQ(NormalizeValue(pin, true), KnobValue("on"));
  EXPECT_EQ(NormalizeValue(pin, false), KnobValue("off"));
  EXPECT_EQ(NormalizeValue(pin, "on"), KnobValue("on"));
  KnobSpec batch = *DefaultKnob("batch_size", kCpu);
  EXPECT_EQ(NormalizeValue(batch, 64), KnobValue(64));
  EXPECT_EQ(NormalizeValue(batch, 64.0), KnobValue(64));
  EXPECT_EQ(NormalizeValue(batch, "128"), KnobValue(128));
  EXPECT_FALSE(NormalizeValue(batch, 1.5));
  EXPECT_FALSE(NormalizeValue(batch, nullptr));
}

TEST(Knob, ValueText) {
  EXPECT_EQ(ValueText(64), "64");
  EXPECT_EQ(ValueText("bf16"), "bf16");
  EXPECT_EQ(ValueText(true), "on");
  KnobValues v = {{"workers", 2}, {"batch_size", 64}, {"amp", "off"}};
  EXPECT_EQ(ValuesText(v), "amp=off batch_size=64 workers=2");
  EXPECT_EQ(ValuesText(v, {"workers", "batch_size", "missing"}), "workers=2 batch_size=64");
}

}  // namespace
}  // namespace sat::tune
