#include "probe/what_if.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "probe/test_results.h"

namespace sat::probe {
namespace {

using ::testing::HasSubstr;
using namespace results;
using core::ParseWhatIf;
using core::WhatIf;
using core::WhatIfLine;
using core::WhatIfTarget;
using core::WhatIfText;

// A probe on an A100 of a bf16 step counted at 10 GFLOP per sample.
ProbeResult OnA100(double loader, double compute, double full) {
  ProbeResult r = WithHelper(true, loader, compute, full);
  r.machine.gpu_name = "NVIDIA A100-SXM4-80GB";
  measure::FlopsInfo f;
  f.per_step = 640e9;
  f.per_sample = 10e9;
  f.samples = 64;
  f.method = "flop_counter";
  f.dtype = "bf16";
  f.device = "cuda";
  r.full.flops = f;
  SetCpu(r.loader, 98, 1, 14);
  return r;
}

std::vector<WhatIfTarget> Targets(std::string_view text) {
  auto t = ParseWhatIf(text);
  EXPECT_TRUE(t) << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : std::vector<WhatIfTarget>{};
}

TEST(WhatIf, ComputeBoundScalesWithThePeakRatio) {
  // Full at 95% of compute; an H100's dense bf16 peak is 989.5 / 312 of the A100's.
  WhatIf w = EstimateWhatIf(OnA100(7000, 1000, 950), Targets("h100"));
  ASSERT_EQ(w.lines.size(), 1u);
  const WhatIfLine& h100 = w.lines[0];
  EXPECT_EQ(h100.label, "H100 SXM");
  EXPECT_EQ(h100.narrowest, "compute");
  ASSERT_TRUE(h100.samples_per_s && h100.vs_now);
  EXPECT_NEAR(*h100.vs_now, 989.5 / 312, 1e-9);
  EXPECT_NEAR(*h100.samples_per_s, 950 * 989.5 / 312, 1e-6);
  EXPECT_EQ(h100.note, "");
  // Eight of them would meet the loader's ceiling on the node's cores: 7,000 per core used x 8 - 8 cores = none left
  // beyond one, so the loader is named.
  WhatIf eight = EstimateWhatIf(OnA100(7000, 1000, 950), Targets("8xh100"));
  EXPECT_EQ(eight.lines[0].label, "8 x H100 SXM");
  EXPECT_EQ(eight.lines[0].narrowest, "loader");
}

TEST(WhatIf, LoaderBoundGainsNothingFromAFasterGpuAndNamesTheLoader) {
  WhatIf w = EstimateWhatIf(OnA100(212, 1840, 208), Targets("h100,l4"));
  // This GPU with the loader on every core but the trainer's comes first (the loader holds it back here).
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_EQ(w.lines[0].label, "this A100, loader on 7 cores");
  EXPECT_EQ(w.lines[0].narrowest, "loader");
  // The loader stage used one core (98%, counted as at least one): 212 per core on 7 cores, at 208/212 overlap.
  EXPECT_NEAR(*w.lines[0].samples_per_s, 208.0 * 7, 1e-6);
  for (const WhatIfLine& l : {w.lines[1], w.lines[2]}) {
    EXPECT_EQ(l.narrowest, "loader") << l.label;
    EXPECT_NEAR(*l.samples_per_s, 208, 1e-9) << l.label;
    EXPECT_EQ(l.note, "gains nothing: the loader holds it at 212 samples/s") << l.label;
  }
  std::string text = WhatIfText(w);
  EXPECT_THAT(text, HasSubstr("what-if (estimates from what was measured, not measurements):\n"));
  EXPECT_THAT(text, HasSubstr("  H100 SXM: ~208 samples/s · 1.00× today's · narrowest: loader · gains nothing"));
  EXPECT_THAT(text, HasSubstr("  assumes compute: 1,840 samples/s here scaled by each GPU's dense bf16 peak"));
}

TEST(WhatIf, TheHostLinkCapsWhatTheGpusCouldTake) {
  // 20 MB per sample host-to-device while training: an L4's 32 GB/s link carries 1,600 samples/s.
  ProbeResult r = OnA100(7000, 3000, 1500);
  r.full.telemetry.gpu_pcie_rx_bytes_per_s = Flat(1500 * 20e6);
  WhatIf w = EstimateWhatIf(r, Targets("l4,h100"));
  ASSERT_EQ(w.lines.size(), 2u);
  // The L4's compute (3,000 x 121/312 = 1,163) is narrower than its link; the H100's link (3,200) than its compute.
  EXPECT_EQ(w.lines[0].narrowest, "compute");
  EXPECT_EQ(w.lines[1].narrowest, "copy");
  // Here the copy ceiling is 1,600 (A100, 32 GB/s): full reached 94% of it.
  EXPECT_NEAR(*w.lines[1].samples_per_s, 1500.0 / 1600 * 3200, 1e-6);
  EXPECT_THAT(WhatIfText(w), HasSubstr("copy: 19.1 MiB per sample host-to-device"));
}

TEST(WhatIf, PricesGiveTheCostOfAnEpoch) {
  ProbeResult r = OnA100(7000, 1000, 950);
  measure::LoaderInfo loader;
  loader.epoch_samples = 1'281'167;
  r.full.loader = loader;
  r.price_per_gpu_hour = 2.0;
  WhatIf w = EstimateWhatIf(r, Targets("a100,4xh100:4.5"));
  ASSERT_EQ(w.lines.size(), 2u);
  // This GPU at --price-per-hour: an epoch at 950 samples/s.
  EXPECT_NEAR(*w.lines[0].per_epoch, 1'281'167 / 950.0 / 3600 * 2.0, 1e-9);
  EXPECT_NEAR(*w.lines[1].per_epoch, 1'281'167 / *w.lines[1].samples_per_s / 3600 * 4.5 * 4, 1e-9);
  // A GPU with no price given has no cost.
  EXPECT_FALSE(EstimateWhatIf(r, Targets("l4")).lines[0].per_epoch);
}

TEST(WhatIf, APrecisionTheOtherGpuLacksIsNotGuessed) {
  WhatIf w = EstimateWhatIf(OnA100(7000, 1000, 950), Targets("t4"));
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_FALSE(w.lines[0].samples_per_s);
  EXPECT_EQ(w.lines[0].note, "n/a: the T4 has no bf16 units");
}

TEST(WhatIf, WithoutWhatItNeedsItSaysWhy) {
  ProbeResult cpu = OnA100(7000, 1000, 950);
  cpu.machine.gpu_index = -1;
  EXPECT_THAT(EstimateWhatIf(cpu, Targets("h100")).unavailable_why, HasSubstr("ran on the CPU"));
  EXPECT_EQ(WhatIfText(EstimateWhatIf(cpu, Targets("h100"))),
            "what-if: n/a (the model ran on the CPU: there is no GPU's MFU to carry to another GPU)\n");
  ProbeResult beside = OnA100(7000, 1000, 950);  // a GPU machine, but the counted step ran on the CPU
  beside.full.flops->device = "cpu";
  EXPECT_THAT(EstimateWhatIf(beside, Targets("h100")).unavailable_why, HasSubstr("ran on the CPU"));
  ProbeResult uncounted = OnA100(7000, 1000, 950);
  uncounted.full.flops.reset();
  EXPECT_THAT(EstimateWhatIf(uncounted, Targets("h100")).unavailable_why, HasSubstr("FLOPs were not counted"));
  ProbeResult no_loader = OnA100(7000, 1000, 950);
  no_loader.loader = Skipped(core::StageKind::kLoader, "no DataLoader");
  EXPECT_THAT(EstimateWhatIf(no_loader, Targets("h100")).unavailable_why, HasSubstr("both needed"));
}

TEST(WhatIf, WithoutAGpuALoaderOrStorageBoundRunGainsNothingFromOne) {
  ProbeResult cpu = WithHelper(false, 40, 9000, 39);
  for (const char* bound : {"loader", "storage"}) {
    cpu.verdict.bottleneck = bound;
    WhatIf w = EstimateWhatIf(cpu, Targets("h100,4xa100"));
    EXPECT_TRUE(w.unavailable_why.empty());
    ASSERT_EQ(w.lines.size(), 2u);
    EXPECT_EQ(w.lines[0].label, "H100 SXM");
    EXPECT_EQ(w.lines[1].label, "4 x A100");
    EXPECT_EQ(*w.lines[0].samples_per_s, 39);
    EXPECT_EQ(w.lines[0].narrowest, bound);
    EXPECT_EQ(w.lines[0].note, std::string("gains nothing from a faster GPU until the ") + bound + " is fixed");
    EXPECT_THAT(WhatIfText(w), HasSubstr("the loader alone reached 40.0 samples/s here"));
  }
  cpu.verdict.bottleneck = "compute";
  EXPECT_THAT(EstimateWhatIf(cpu, Targets("h100")).unavailable_why, HasSubstr("ran on the CPU"));
}

}  // namespace
}  // namespace sat::probe
