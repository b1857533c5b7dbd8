#include "tune/flag.h"

#include <gtest/gtest.h>

namespace sat::tune {
namespace {

using Argv = std::vector<std::string>;

FlagBinding Value(const std::string& option, Argv strings, nlohmann::json script) {
  return FlagBinding{option, std::move(strings), FlagForm::kValue, std::move(script)};
}

TEST(Flag, ValueOptionsAreReplacedInEveryFormOrAdded) {
  const FlagBinding bs = Value("--batch-size", {"--batch-size", "--bs", "-b"}, 64);
  EXPECT_EQ(SetFlag({"python", "t.py", "--batch-size", "64", "--lr", "1"}, bs, 128),
            (Argv{"python", "t.py", "--batch-size", "128", "--lr", "1"}));
  EXPECT_EQ(SetFlag({"python", "t.py", "--bs=64"}, bs, 32), (Argv{"python", "t.py", "--bs=32"}));
  EXPECT_EQ(SetFlag({"python", "t.py", "-b64"}, bs, 32), (Argv{"python", "t.py", "-b32"}));
  EXPECT_EQ(SetFlag({"python", "t.py"}, bs, 32), (Argv{"python", "t.py", "--batch-size", "32"}));
  // The script's own value with the flag absent: the command stays as the user wrote it.
  EXPECT_EQ(SetFlag({"python", "t.py"}, bs, 64), (Argv{"python", "t.py"}));
  // Added before a lone "--"; what follows it is the script's, never touched.
  EXPECT_EQ(SetFlag({"python", "t.py", "--", "--bs", "7"}, bs, 32),
            (Argv{"python", "t.py", "--batch-size", "32", "--", "--bs", "7"}));
  // Choices are written as their names.
  EXPECT_EQ(SetFlag({"t.py", "--amp", "off"}, Value("--amp", {"--amp"}, "off"), "bf16"), (Argv{"t.py", "--amp", "bf16"}));
}

TEST(Flag, SwitchesAreAddedOrRemoved) {
  const FlagBinding pin{"--pin-memory", {"--pin-memory"}, FlagForm::kStoreTrue, "off"};
  EXPECT_EQ(SetFlag({"t.py", "--lr", "1"}, pin, "on"), (Argv{"t.py", "--lr", "1", "--pin-memory"}));
  EXPECT_EQ(SetFlag({"t.py", "--pin-memory", "--lr", "1"}, pin, "off"), (Argv{"t.py", "--lr", "1"}));
  EXPECT_EQ(SetFlag({"t.py", "--pin-memory", "--lr", "1"}, pin, "on"), (Argv{"t.py", "--pin-memory", "--lr", "1"}));
  const FlagBinding no_pin{"--no-pin", {"--no-pin"}, FlagForm::kStoreFalse, "on"};
  EXPECT_EQ(SetFlag({"t.py"}, no_pin, "off"), (Argv{"t.py", "--no-pin"}));
  EXPECT_EQ(SetFlag({"t.py"}, no_pin, "on"), (Argv{"t.py"}));
  const FlagBinding amp{"--amp", {"--amp", "--no-amp"}, FlagForm::kBooleanOptional, "off"};
  EXPECT_EQ(SetFlag({"t.py", "--no-amp", "x"}, amp, "on"), (Argv{"t.py", "--amp", "x"}));
  EXPECT_EQ(SetFlag({"t.py", "--amp"}, amp, "off"), (Argv{"t.py", "--no-amp"}));
  EXPECT_EQ(amp.Describe(), "--amp/--no-amp");
}

TEST(Flag, BindingsFromParsedOptions) {
  measure::FlagOption o{"workers", {"-j", "--workers"}, "value", 4, 0, true};
  auto b = BindingOf(o, 4);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->option, "--workers");
  EXPECT_EQ(b->form, FlagForm::kValue);
  o.kind = "append";
  EXPECT_FALSE(BindingOf(o, 4).has_value());
  // Named by the script: the form comes from its parser when the option is there.
  measure::FlagOption pin{"pin", {"--pin-memory"}, "store_true", false, false, false};
  EXPECT_EQ(NamedBinding("--pin-memory", {pin}, "off").form, FlagForm::kStoreTrue);
  EXPECT_EQ(NamedBinding("--workers", {pin}, 0).form, FlagForm::kValue);
}

}  // namespace
}  // namespace sat::tune
