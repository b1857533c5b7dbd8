#include "core/what_if.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sat::core {
namespace {

using ::testing::HasSubstr;

// What a probe on an A100 measured of a bf16 step: the pipes' rates here, the loader on one core of eight.
WhatIfInputs OnA100(double loader, double compute, double full) {
  WhatIfInputs in;
  in.full = full;
  in.loader = loader;
  in.compute = compute;
  in.gpu_probed = true;
  in.gpu_name = "NVIDIA A100-SXM4-80GB";
  in.precision = Precision::kBf16;
  in.on_gpu = true;
  in.cores = 8;
  return in;
}

std::vector<WhatIfTarget> Targets(std::string_view text) {
  auto t = ParseWhatIf(text);
  EXPECT_TRUE(t) << (t.ok() ? "" : t.error().message);
  return t.ok() ? *t : std::vector<WhatIfTarget>{};
}

TEST(EstimateWhatIf, TheSameMfuOnAnotherGpuFromTheInputsAlone) {
  WhatIf w = EstimateWhatIf(OnA100(7000, 1000, 950), Targets("h100"));
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(w.lines[0].label, "H100 SXM");
  EXPECT_EQ(w.lines[0].narrowest, "compute");
  ASSERT_TRUE(w.lines[0].samples_per_s);
  // 95% of the compute ceiling here, the same share of an H100's dense bf16 peak (989.5 / 312 of the A100's).
  EXPECT_NEAR(*w.lines[0].samples_per_s, 950 * 989.5 / 312, 1e-6);
  EXPECT_THAT(WhatIfText(w), HasSubstr("copy: not estimated (the GPU reported no PCIe throughput)"));
}

TEST(EstimateWhatIf, ALoaderBoundRunWithoutAGpuGetsTodaysRate) {
  WhatIfInputs in = OnA100(40, 9000, 39);
  in.gpu_probed = false;
  in.bound_by = "loader";
  WhatIf w = EstimateWhatIf(in, Targets("h100"));
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_EQ(*w.lines[0].samples_per_s, 39);
  EXPECT_EQ(w.lines[0].note, "gains nothing from a faster GPU until the loader is fixed");
  in.bound_by.clear();
  EXPECT_THAT(EstimateWhatIf(in, Targets("h100")).unavailable_why, HasSubstr("ran on the CPU"));
}

TEST(WhatIfText, NothingAskedIsNoSection) {
  EXPECT_EQ(WhatIfText(WhatIf{}), "");
  WhatIfInputs none;
  EXPECT_EQ(WhatIfText(EstimateWhatIf(none, Targets("h100"))),
            "what-if: n/a (the full stage measured no throughput)\n");
}

TEST(ParseWhatIf, GpusCountsAndPrices) {
  std::vector<WhatIfTarget> t = Targets(" h100 , a100:1.80,4xl4,H100-PCIe");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "h100");
  EXPECT_EQ(t[1].price_per_gpu_hour, 1.80);
  EXPECT_EQ(t[2].gpus, 4);
  EXPECT_EQ(t[2].name, "l4");
  EXPECT_EQ(t[3].name, "H100-PCIe");
  EXPECT_EQ(ParseWhatIf("b200").error().message,
            "--what-if 'b200': 'b200' is not a GPU saturate knows (known: h100, h100-pcie, h100-nvl, gh200, h200, "
            "h200-nvl, a100, l40s, l4, a10, t4, v100, v100-pcie, v100s)");
  EXPECT_EQ(ParseWhatIf("a100:free").error().message,
            "--what-if 'a100:free': the price after ':' must be a positive number (money per GPU-hour, e.g. "
            "a100:1.80)");
  EXPECT_EQ(ParseWhatIf("0xh100").error().message, "--what-if '0xh100': the GPU count must be 1 to 64");
  EXPECT_EQ(ParseWhatIf(",").error().message, "--what-if needs at least one GPU, e.g. --what-if h100,a100:1.80,4xl4");
  EXPECT_FALSE(ParseWhatIf("a100:inf"));
}

}  // namespace
}  // namespace sat::core
