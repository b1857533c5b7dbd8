#include "cli/sweep_backends.h"

#include <gtest/gtest.h>

namespace sat::cli {
namespace {

sweep::Spec SpecWith(const std::string& yaml_backend) {
  auto spec = sweep::ParseSpec("program: t.py\nmethod: grid\nparameters:\n  x: {value: 1}\n" + yaml_backend, "s.yaml");
  EXPECT_TRUE(spec) << spec.error().message;
  return spec.ok() ? *spec : sweep::Spec();
}

TEST(SweepBackends, OneRowEachLocalFirst) {
  const std::vector<SweepBackend>& all = SweepBackends();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "local");
  EXPECT_EQ(all[1].name, "slurm");
  for (const SweepBackend& b : all) {
    EXPECT_FALSE(b.description.empty()) << b.name;
    EXPECT_NE(b.run, nullptr) << b.name;
    // The start line names a backend off this machine; this machine's devices are named as found.
    EXPECT_EQ(b.on.empty(), b.this_machine) << b.name;
  }
}

TEST(SweepBackends, TheSpecChoosesAndSlurmFlagWins) {
  auto local = ChooseBackend(SpecWith(""), false);
  ASSERT_TRUE(local) << local.error().message;
  EXPECT_EQ((*local)->name, "local");
  EXPECT_TRUE((*local)->this_machine);
  auto slurm = ChooseBackend(SpecWith("saturate: {backend: slurm}\n"), false);
  ASSERT_TRUE(slurm) << slurm.error().message;
  EXPECT_EQ((*slurm)->name, "slurm");
  EXPECT_TRUE((*slurm)->leaves_jobs);
  auto flag = ChooseBackend(SpecWith("saturate: {backend: local}\n"), true);
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_EQ((*flag)->name, "slurm");
}

TEST(SweepBackends, AnUnknownNameIsNamedWhereGivenWithTheKnownOnes) {
  for (bool slurm_flag : {false, true}) {
    auto bad = ChooseBackend(SpecWith("saturate:\n  backend: k8s\n"), slurm_flag);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit_code, kExitUsage);
    EXPECT_EQ(bad.error().message,
              "s.yaml:6:12: saturate: unknown backend 'k8s'; known: local (this machine's GPUs or CPU cores, packed by "
              "measurement), slurm (Slurm jobs sized from measurement, as saturate.slurm says)");
  }
}

}  // namespace
}  // namespace sat::cli
