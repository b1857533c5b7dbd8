#include "core/session.h"

#include <gtest/gtest.h>

#include "live/live_figures.h"

namespace sat::core {
namespace {

SessionSpec Spec() {
  SessionSpec spec;
  spec.span_s = 10;
  spec.command_name = "tune";
  spec.options.argv = {"python3", "train.py"};
  spec.options.samples_per_step = 32;
  spec.options.verbose = true;
  spec.options.target_rel_half_width = 0.03;
  return spec;
}

TEST(Session, StartsTheSamplerAndFillsTheSharedOptions) {
  live::LiveFigures live("host");
  SessionSpec spec = Spec();
  spec.options.live = &live;
  auto session = StartSession(spec);
  ASSERT_TRUE(session) << session.error().message;
  EXPECT_NE(session->sampling.sampler, nullptr);
  EXPECT_EQ(session->sampling.gpu_index, -1);  // no GPU backend
  EXPECT_EQ(session->machine.gpu_index, -1);
  EXPECT_GE(session->machine.cpu_count, 1u);
  const StageOptions& base = session->base;
  EXPECT_EQ(base.argv, spec.options.argv);
  EXPECT_TRUE(base.auto_instrument);
  EXPECT_EQ(base.samples_per_step, 32);
  EXPECT_TRUE(base.verbose);
  EXPECT_DOUBLE_EQ(base.estimator.target_rel_half_width, 0.03);
  EXPECT_EQ(base.live, &live);
  EXPECT_EQ(base.live_labels, (live::Labels{{"command", "tune"}}));
  EXPECT_TRUE(base.env.empty());  // no --device: the command sees every GPU
  session->sampling.sampler->Stop();
}

TEST(Session, AParsePatternTurnsTheAutomaticInstrumentationOff) {
  SessionSpec spec = Spec();
  spec.options.parse = "tqdm";
  auto session = StartSession(spec);
  ASSERT_TRUE(session) << session.error().message;
  EXPECT_FALSE(session->base.auto_instrument);
  EXPECT_EQ(session->base.parse, "tqdm");
  session->sampling.sampler->Stop();
}

}  // namespace
}  // namespace sat::core
