#include "measure/line_parser.h"

#include <gtest/gtest.h>

namespace sat::measure {
namespace {

LineParser Make(std::string_view spec, std::optional<double> batch = std::nullopt) {
  Result<LineParser> p = LineParser::Create(spec, batch);
  EXPECT_TRUE(p) << p.error().message;
  return *std::move(p);
}

std::string ErrorOf(std::string_view spec, std::optional<double> batch = std::nullopt) {
  Result<LineParser> p = LineParser::Create(spec, batch);
  if (p) return "(no error)";
  EXPECT_EQ(p.error().exit_code, kExitUsage);
  return p.error().message;
}

void ExpectObservation(const std::optional<ParsedLine>& got, double t, double duration, double samples) {
  ASSERT_TRUE(got.has_value());
  EXPECT_DOUBLE_EQ(got->observation.t_end_s, t);
  EXPECT_NEAR(got->observation.duration_s, duration, 1e-12);
  EXPECT_NEAR(got->observation.samples, samples, 1e-9);
}

TEST(LineParser, SamplesPerSecondNeedsNoBatchSize) {
  const LineParser p = Make(R"(throughput: (?P<samples_per_s>[0-9.]+) img/s)");
  ExpectObservation(p.Parse("epoch 1 throughput: 812.5 img/s", 7.5), 7.5, 1, 812.5);
  EXPECT_FALSE(p.Parse("epoch 1 loss 2.3", 8).has_value());
  EXPECT_FALSE(p.Parse("epoch 1 throughput: . img/s", 8).has_value());
}

TEST(LineParser, StepTimesTimesBatchSize) {
  ExpectObservation(Make(R"(step took (?P<step_s>\S+)s)", 64).Parse("step took 0.02s", 1), 1, 0.02, 64);
  ExpectObservation(Make(R"((?P<ms_per_step>\d+) ms)", 32).Parse("iter 5: 250 ms", 2), 2, 0.25, 32);
  ExpectObservation(Make(R"((?P<it_per_s>[\d.]+) it/s)", 16).Parse("4.5 it/s", 3), 3, 1, 72);
}

TEST(LineParser, DataWaitShare) {
  const LineParser p = Make(R"(step (?P<step_s>[\d.]+) data (?P<data_ms>[\d.]+)ms)", 8);
  const std::optional<ParsedLine> got = p.Parse("step 0.5 data 100ms", 1);
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->data_wait_share.has_value());
  EXPECT_DOUBLE_EQ(*got->data_wait_share, 0.2);
  // From the rate and the batch size when no step time is printed.
  const std::optional<ParsedLine> from_rate =
      Make(R"((?P<samples_per_s>[\d.]+)/s data (?P<data_s>[\d.]+))", 10).Parse("100/s data 0.05", 1);
  ASSERT_TRUE(from_rate.has_value());
  EXPECT_DOUBLE_EQ(*from_rate->data_wait_share, 0.5);
  EXPECT_FALSE(Make(R"((?P<samples_per_s>[\d.]+)/s)").Parse("100/s", 1)->data_wait_share.has_value());
}

TEST(LineParser, TqdmPreset) {
  const LineParser p = Make("tqdm", 32);
  ExpectObservation(p.Parse(" 45%|####5     | 450/1000 [00:12<00:15, 36.50it/s]", 4), 4, 1, 36.5 * 32);
  ExpectObservation(p.Parse(" 45%|####5     | 450/1000 [00:12<00:15, 36.50it/s, loss=0.123]", 4), 4, 1, 36.5 * 32);
  ExpectObservation(p.Parse("  2%|2         | 2/100 [00:02<02:00,  1.23s/it]", 5), 5, 1.23, 32);
  EXPECT_FALSE(p.Parse("  0%|          | 0/100 [00:00<?, ?it/s]", 6).has_value());
  EXPECT_FALSE(p.Parse("  9%|9         | 9000/100000 [00:03<00:30, 3.01kit/s]", 6).has_value());
}

TEST(LineParser, LightningPresetTakesOnlyTheTrainingBar) {
  const LineParser p = Make("lightning", 64);
  ExpectObservation(
      p.Parse("Epoch 3:  45%|████▌     | 450/1000 [00:12<00:15, 36.50it/s, v_num=0, train_loss=0.123]", 9), 9, 1,
      36.5 * 64);
  ExpectObservation(p.Parse("Epoch 3/9 ━━━━━━━━━━━━━━━━ 450/1000 0:00:12 • 0:00:15 36.50it/s v_num: 0", 9), 9, 1,
                    36.5 * 64);
  EXPECT_FALSE(p.Parse("Validation DataLoader 0:  50%|█████     | 25/50 [00:01<00:01, 25.00it/s]", 9).has_value());
}

TEST(LineParser, KerasPreset) {
  const LineParser p = Make("keras", 128);
  ExpectObservation(p.Parse("100/100 [==============================] - 2s 20ms/step - loss: 0.1234", 3), 3, 0.02, 128);
  ExpectObservation(p.Parse("10/10 [==============================] - 13s 1s/step - loss: 0.5", 3), 3, 1, 128);
  EXPECT_FALSE(p.Parse("Epoch 2/10", 3).has_value());
}

TEST(LineParser, SaturateExamplePreset) {
  const LineParser p = Make("saturate-example");
  const std::optional<ParsedLine> got = p.Parse("step 20 loss 2.1 samples/s 840.2 step_s 0.0123 data_s 0.0040", 2);
  ExpectObservation(got, 2, 1, 840.2);
  ASSERT_TRUE(got->data_wait_share.has_value());
  EXPECT_NEAR(*got->data_wait_share, 0.0040 / 0.0123, 1e-12);
  ExpectObservation(p.Parse("step 40 loss 1.9 samples/s 9.1e+02", 3), 3, 1, 910);
  EXPECT_FALSE(p.Parse("epoch 1 done", 3).has_value());
  EXPECT_TRUE(got->phase_shares.empty());
  const std::optional<ParsedLine> metrics =
      p.Parse("step 60 loss 1.2 samples/s 500.0 step_s 0.0200 data_s 0.0010 metrics_s 0.0080", 4);
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NEAR(metrics->phase_shares.at("metrics"), 0.4, 1e-12);
}

TEST(LineParser, PhaseGroupsGiveShares) {
  const LineParser p = Make(R"((?P<ms_per_step>[0-9.]+) ms/step log (?P<phase_logging_ms>[0-9.]+) ms)", 32);
  const std::optional<ParsedLine> got = p.Parse("50 ms/step log 5 ms", 1);
  ExpectObservation(got, 1, 0.05, 32);
  EXPECT_NEAR(got->phase_shares.at("logging"), 0.1, 1e-12);
}

TEST(LineParser, BadRegexCarriesPcreMessageAndOffset) {
  EXPECT_EQ(ErrorOf("(?P<samples_per_s>[0-9.]+"),
            "bad regular expression '(?P<samples_per_s>[0-9.]+': missing closing parenthesis at offset 25");
}

TEST(LineParser, RegexWithoutUsableGroupsListsThem) {
  const std::string e = ErrorOf(R"(loss (?P<loss>[0-9.]+))");
  EXPECT_NE(e.find("captures none of the groups samples_per_s, it_per_s, step_s, s_per_it, ms_per_step"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("tqdm, lightning, keras, saturate-example"), std::string::npos) << e;
  EXPECT_NE(ErrorOf("tqmd").find("did you mean 'tqdm'?"), std::string::npos);
  EXPECT_NE(ErrorOf(R"((?P<data_s>[0-9.]+))").find("captures none"), std::string::npos);
}

TEST(LineParser, MisspeltGroupIsCaught) {
  EXPECT_EQ(ErrorOf(R"((?P<samples_per_sec>[0-9.]+))"),
            "group 'samples_per_sec' is not one saturate reads; did you mean 'samples_per_s'?");
}

TEST(LineParser, StepGroupsNeedBatchSize) {
  EXPECT_EQ(ErrorOf("tqdm"), "'tqdm' reports steps or iterations, not samples: give the batch size (samples per step)");
  EXPECT_NE(ErrorOf(R"((?P<step_s>[0-9.]+))").find("give the batch size"), std::string::npos);
  EXPECT_EQ(ErrorOf("tqdm", 0), "batch size must be a positive number, not 0");
}

TEST(LineParser, DuplicateGroupNamesAreRefused) {
  EXPECT_EQ(ErrorOf(R"((?J)(?P<step_s>\d+)s|(?P<step_s>\d+)ms)", 4),
            R"(group 'step_s' appears more than once in '(?J)(?P<step_s>\d+)s|(?P<step_s>\d+)ms')");
}

TEST(LineParser, InvalidUtf8InOutputDoesNotBreakMatching) {
  const LineParser p = Make("saturate-example");
  ExpectObservation(p.Parse("\xff\xfe samples/s 100", 1), 1, 1, 100);
}

TEST(LineParser, PresetNames) {
  EXPECT_EQ(LineParser::PresetNames(), (std::vector<std::string>{"tqdm", "lightning", "keras", "saturate-example"}));
  EXPECT_EQ(Make("tqdm", 1).pattern().find("it_per_s") != std::string::npos, true);
}

}  // namespace
}  // namespace sat::measure
