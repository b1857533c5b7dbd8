// The `saturate:` section, read through ParseSpec so that errors carry the file's positions.
#include "sweep/saturate_spec.h"

#include <gtest/gtest.h>

#include "sweep/spec.h"
#include "sweep/test_spec.h"

namespace sat::sweep {
namespace {

using testing::ErrorOf;
using testing::MustParse;

TEST(SaturateSpec, GpusForms) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  x: {value: 1}\nsaturate:\n  gpus: ";
  EXPECT_TRUE(MustParse(head + "all\n").saturate.gpus.empty());
  EXPECT_EQ(MustParse(head + "\"2,3\"\n").saturate.gpus, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(MustParse(head + "1\n").saturate.gpus, (std::vector<unsigned>{1}));
}

TEST(SaturateSpec, StageTakesAPathAListOrEntriesWithAPath) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  lr: {value: 1}\n";
  EXPECT_TRUE(MustParse(head).saturate.stage.paths.empty());
  EXPECT_EQ(MustParse(head).saturate.stage.policy, StagePolicy::kAuto);
  EXPECT_EQ(MustParse(head + "saturate:\n  stage: /nfs/ds\n").saturate.stage.paths,
            std::vector<std::string>{"/nfs/ds"});
  const Spec spec = MustParse(head +
                              "saturate:\n  stage: [{path: /nfs/a}, /nfs/b]\n  stage_policy: always\n"
                              "  stage_dir: /scratch/me\n  stage_cap: 20GiB\n");
  EXPECT_EQ(spec.saturate.stage.paths, (std::vector<std::string>{"/nfs/a", "/nfs/b"}));
  EXPECT_EQ(spec.saturate.stage.policy, StagePolicy::kAlways);
  EXPECT_EQ(spec.saturate.stage.dir, "/scratch/me");
  EXPECT_EQ(spec.saturate.stage.cap_bytes, 20ull << 30);
}

TEST(SaturateSpec, StageErrorsNameTheSetting) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  lr: {value: 1}\nsaturate:\n";
  EXPECT_EQ(ErrorOf(head + "  stage_policy: sometimes\n"),
            "sweep.yaml:6:17: saturate: unknown stage_policy 'sometimes'; use auto, always or never");
  EXPECT_NE(ErrorOf(head + "  stage_cap: lots\n").find("'stage_cap' must be a size above 0"), std::string::npos);
  EXPECT_NE(ErrorOf(head + "  stage: [{paht: /x}]\n").find("paht"), std::string::npos);
  EXPECT_NE(ErrorOf(head + "  stage: [{}]\n").find("needs a 'path'"), std::string::npos);
  EXPECT_NE(ErrorOf(head + "  stage: ['']\n").find("empty"), std::string::npos);
  EXPECT_EQ(ErrorOf(head + "  stage_verify: hashes\n"),
            "sweep.yaml:6:17: saturate: unknown stage_verify 'hashes'; use sizes or checksums");
  EXPECT_NE(ErrorOf(head + "  stage_copy_first: soon\n").find("'stage_copy_first' must be a duration like 10s"),
            std::string::npos);
}

TEST(SaturateSpec, StageCopyFirstIsADuration) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  lr: {value: 1}\nsaturate:\n  stage: /d\n";
  auto plain = ParseSpec(head, "sweep.yaml");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->saturate.stage.copy_first_s, 10);
  auto longer = ParseSpec(head + "  stage_copy_first: 2m\n", "sweep.yaml");
  ASSERT_TRUE(longer) << longer.error().message;
  EXPECT_EQ(longer->saturate.stage.copy_first_s, 120);
  auto never = ParseSpec(head + "  stage_copy_first: 0\n", "sweep.yaml");
  ASSERT_TRUE(never) << never.error().message;
  EXPECT_EQ(never->saturate.stage.copy_first_s, 0);
}

TEST(SaturateSpec, StageVerifyIsSizesUnlessChecksumsAreAsked) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  lr: {value: 1}\nsaturate:\n  stage: /d\n";
  auto plain = ParseSpec(head, "sweep.yaml");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->saturate.stage.verify_checksums);
  auto checked = ParseSpec(head + "  stage_verify: checksums\n", "sweep.yaml");
  ASSERT_TRUE(checked) << checked.error().message;
  EXPECT_TRUE(checked->saturate.stage.verify_checksums);
}

TEST(SaturateSpec, TimeBudgetRunsPackOrOnePerDevice) {
  const std::string head = "program: t.py\nmethod: grid\nparameters:\n  lr: {value: 1}\nsaturate:\n";
  auto packed = ParseSpec(head + "  time_budget_runs: pack\n", "sweep.yaml");
  ASSERT_TRUE(packed) << packed.error().message;
  EXPECT_TRUE(packed->saturate.pack_clocked);
  auto alone = ParseSpec(head + "  time_budget_runs: one_per_device\n", "sweep.yaml");
  ASSERT_TRUE(alone) << alone.error().message;
  EXPECT_FALSE(alone->saturate.pack_clocked);
  EXPECT_EQ(ErrorOf(head + "  time_budget_runs: squeeze\n"),
            "sweep.yaml:6:21: saturate: 'time_budget_runs' is pack or one_per_device (runs that stop on the clock "
            "share a device only with pack), not 'squeeze'");
}

}  // namespace
}  // namespace sat::sweep
