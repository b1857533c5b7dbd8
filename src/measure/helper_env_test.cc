#include "measure/helper_env.h"

#include <gtest/gtest.h>

#include "run/environment.h"

namespace sat::measure {
namespace {

TEST(HelperEnv, SetsTheContractOverTheCommandsOwnEnvironment) {
  run::RunSpec spec;
  spec.env = {{"SATURATE_AUTO", "0"}, {"KEEP", "me"}, {"SATURATE_RUN_ID", "old"}};
  HelperEnv h;
  h.channel_path = "/tmp/x/channel";
  h.run_id = "probe-1-full";
  h.auto_instrument = true;
  h.report_interval_s = 0.05;
  h.mode = "compute";
  h.auto_target = "train.py:12";
  h.samples_per_step = 32;
  h.trace_path = "/tmp/trace.json";
  ApplyHelperEnv(h, spec);
  EXPECT_EQ(spec.env["SATURATE_CHANNEL"], "/tmp/x/channel");
  EXPECT_EQ(spec.env["SATURATE_RUN_ID"], "probe-1-full");
  EXPECT_EQ(spec.env["SATURATE_AUTO"], "1");
  EXPECT_EQ(spec.env["SATURATE_REPORT_INTERVAL"], "0.05");
  EXPECT_EQ(spec.env["SATURATE_MODE"], "compute");
  EXPECT_EQ(spec.env["SATURATE_AUTO_TARGET"], "train.py:12");
  EXPECT_EQ(spec.env["SATURATE_SAMPLES_PER_STEP"], "32");
  EXPECT_EQ(spec.env["SATURATE_TRACE"], "/tmp/trace.json");
  EXPECT_EQ(spec.env["PYTHONUNBUFFERED"], "1");
  EXPECT_EQ(spec.env["KEEP"], "me");
  EXPECT_EQ(spec.pythonpath_prepend, std::vector<std::string>{run::HelperPythonDir()});
}

// What is not given is not set: the command's own value, or the helper's default, stands.
TEST(HelperEnv, UnsetFieldsLeaveTheEnvironmentAlone) {
  run::RunSpec spec;
  spec.env = {{"SATURATE_AUTO", "0"}, {"SATURATE_REPORT_INTERVAL", "1"}};
  ApplyHelperEnv(HelperEnv{}, spec);
  EXPECT_EQ(spec.env["SATURATE_AUTO"], "0");
  EXPECT_EQ(spec.env["SATURATE_REPORT_INTERVAL"], "1");
  for (const char* name : {"SATURATE_CHANNEL", "SATURATE_RUN_ID", "SATURATE_MODE", "SATURATE_AUTO_TARGET",
                           "SATURATE_SAMPLES_PER_STEP", "SATURATE_TRACE"}) {
    EXPECT_EQ(spec.env.count(name), 0u) << name;
  }
  HelperEnv off;
  off.auto_instrument = false;
  ApplyHelperEnv(off, spec);
  EXPECT_EQ(spec.env["SATURATE_AUTO"], "0");
}

TEST(HelperEnv, Knobs) {
  std::map<std::string, std::string> env;
  SetHelperKnobs(env, R"({"batch_size":64})");
  EXPECT_EQ(env[kKnobsVar], R"({"batch_size":64})");
  EXPECT_STREQ(kKnobsVar, "SATURATE_KNOBS");
}

}  // namespace
}  // namespace sat::measure
