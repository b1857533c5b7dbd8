#include "measure/helper_message.h"

#include <gtest/gtest.h>

namespace sat::measure {
namespace {

constexpr const char* kHeader = R"("v":1,"run":"r1","pid":4242,"t":123.5)";

std::string Message(std::string_view type, std::string_view fields) {
  std::string s = std::string("{") + kHeader + R"(,"type":")" + std::string(type) + "\"";
  if (!fields.empty()) s += "," + std::string(fields);
  return s + "}";
}

TEST(HelperMessage, Progress) {
  Result<HelperMessage> m = ParseHelperMessage(Message(
      "progress", R"("steps":10,"samples":640,"wait_s":0.5,"step_s":2.25,"phases":{"metrics":0.25,"bad":null},)"
                  R"("mem":{"allocated":100,"reserved":200,"peak":150},"metrics":{"loss":2.5,"acc":null},"extra":1)"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kProgress);
  EXPECT_EQ(m->run, "r1");
  EXPECT_EQ(m->pid, 4242);
  EXPECT_DOUBLE_EQ(m->t, 123.5);
  EXPECT_EQ(m->steps, 10);
  EXPECT_DOUBLE_EQ(m->samples, 640);
  EXPECT_DOUBLE_EQ(m->wait_s, 0.5);
  EXPECT_DOUBLE_EQ(m->step_s, 2.25);
  EXPECT_EQ(m->phases, (std::map<std::string, double>{{"metrics", 0.25}}));
  EXPECT_EQ(m->metrics, (std::map<std::string, double>{{"loss", 2.5}}));
  EXPECT_EQ(m->mem_allocated_bytes, 100);
  EXPECT_EQ(m->mem_reserved_bytes, 200);
  EXPECT_EQ(m->mem_peak_bytes, 150);
  EXPECT_EQ(m->raw["extra"], 1);
}

TEST(HelperMessage, ProgressWithoutMemory) {
  Result<HelperMessage> m = ParseHelperMessage(Message("progress", R"("steps":0,"samples":0,"mem":null)"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->mem_peak_bytes.has_value());
  EXPECT_TRUE(m->phases.empty());
}

TEST(HelperMessage, DoneNeedsReason) {
  Result<HelperMessage> m = ParseHelperMessage(Message("done", R"("steps":3,"samples":96,"reason":"exhausted")"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kDone);
  EXPECT_EQ(m->done_reason, "exhausted");
  EXPECT_EQ(m->steps, 3);
  Result<HelperMessage> bad = ParseHelperMessage(Message("done", R"("steps":3,"samples":96)"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "missing field 'reason'");
}

TEST(HelperMessage, HelloAndKnob) {
  Result<HelperMessage> hello =
      ParseHelperMessage(Message("hello", R"("mode":"loader","python":"3.11.2","torch":null,"device":"cpu")"));
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->mode, "loader");
  EXPECT_EQ(hello->python, "3.11.2");
  EXPECT_EQ(hello->torch, std::nullopt);
  EXPECT_EQ(hello->device, "cpu");

  Result<HelperMessage> knob =
      ParseHelperMessage(Message("knob", R"("name":"batch_size","value":64,"default":32,"source":"saturate")"));
  ASSERT_TRUE(knob.ok()) << knob.error().message;
  EXPECT_EQ(knob->knob_name, "batch_size");
  EXPECT_EQ(knob->knob_value, 64);
  EXPECT_EQ(knob->knob_default, 32);
  EXPECT_EQ(knob->knob_source, "saturate");
}

TEST(HelperMessage, RejectsWhatIsNotAMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"garbage", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"v":2,"type":"progress"})", "protocol version 2 (this saturate speaks 1)"},
      {Message("launch", ""), "unknown message type 'launch'"},
      {R"({"v":1,"type":"hello","run":"","t":1})", "missing field 'pid'"},
      {R"({"v":1,"type":"hello","run":"","pid":"12","t":1})", "field 'pid' is not an integer"},
      {Message("progress", R"("samples":1)"), "missing field 'steps'"},
      {Message("progress", R"("steps":-1,"samples":1)"), "field 'steps' is negative"},
      {Message("progress", R"("steps":1,"samples":1,"phases":[1])"), "field 'phases' is not an object"},
      {Message("progress", R"("steps":1,"samples":1,"phases":{"io":"x"})"), "field 'phases.io' is not a number"},
      {Message("progress", R"("steps":1,"samples":1,"mem":{"peak":"big"})"), "field 'mem.peak' is not a number"},
      {Message("knob", R"("value":1)"), "missing field 'name'"},
      {Message("hello", R"("torch":2)"), "field 'torch' is not a string"},
  };
  for (const auto& [text, error] : cases) {
    Result<HelperMessage> m = ParseHelperMessage(text);
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_EQ(m.error().message, error) << text;
  }
}

TEST(HelperMessage, MetricsFromReport) {
  Result<HelperMessage> m = ParseHelperMessage(Message("metrics", R"("metrics":{"loss":0.31,"acc":null},"steps":7)"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->type, MessageType::kMetrics);
  EXPECT_DOUBLE_EQ(m->metrics.at("loss"), 0.31);
  EXPECT_EQ(m->metrics.count("acc"), 0u);
  EXPECT_EQ(m->steps, 7);
  EXPECT_FALSE(ParseHelperMessage(Message("metrics", R"("metrics":{"loss":"low"})")).ok());
}

TEST(HelperMessage, TypeNames) {
  EXPECT_EQ(MessageTypeName(MessageType::kMetrics), "metrics");
  EXPECT_EQ(MessageTypeName(MessageType::kHello), "hello");
  EXPECT_EQ(MessageTypeName(MessageType::kDone), "done");
}

}  // namespace
}  // namespace sat::measure
