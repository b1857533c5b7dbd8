// Rule 12 of the packer (sweep/packing.h): on a GPU, a growth step's newcomers start up while the check that growth
// waits for ends, and join a degree only once the one they were started ahead of is proven.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sweep/packing.h"

namespace sat::sweep {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

// Every run's throughput: `rate` samples/s from windows of 20 steps; the before-window's end is recorded.
class RecordedRates final : public RateSource {
 public:
  WindowRates Rates(const std::string&, double t0, double t1) const override {
    windows.push_back({t0, t1});
    WindowRates r;
    r.samples_per_s = t1 <= slow_after ? 100.0 : 100.0 * after;
    r.steps = 20;
    r.reports_steps = true;
    return r;
  }
  double slow_after = 1e9, after = 1;  // from `slow_after` on, each run trains at `after` of its rate
  mutable std::vector<std::pair<double, double>> windows;
};

// One GPU of 80 GiB; 2-s warm-ups and windows; `runs` queued as r0, r1, ...
struct AheadFixture {
  explicit AheadFixture(int runs, bool start_ahead = true, DeviceKind kind = DeviceKind::kGpu) {
    PackingParams params;
    params.window_s = 2;
    params.max_per_device = 8;
    params.start_ahead = start_ahead;
    packer.emplace(std::vector<DeviceInfo>{{kind == DeviceKind::kGpu ? "gpu0" : "cpu", kind, 0}}, params);
    for (int i = 0; i < runs; ++i) packer->Enqueue("r" + std::to_string(i), i, "");
  }
  std::vector<Admission> Admit(double now, uint64_t free = 70 * kGiB) {
    return packer->Admit(now, {DeviceState{80 * kGiB, free}}, HostState{});
  }
  std::optional<Packer> packer;
  RecordedRates rates;
};

std::vector<std::string> Keys(const std::vector<Admission>& admitted) {
  std::vector<std::string> keys;
  for (const Admission& a : admitted) keys.push_back(a.key);
  return keys;
}

// The first run steps at 10 s (its start-up) and is measured at 14 s (2-s warm-up and window). Its successor in the
// step to degree 2 starts at 11 s, half a warm-up after that first step, rather than at 14 s, and the check's
// before-window ends at the newcomer's first step (21 s), not at its start.
TEST(PackerAhead, TheFirstNewcomerStartsUpWhileTheFirstRunIsMeasured) {
  AheadFixture f(4);
  ASSERT_EQ(Keys(f.Admit(0)), std::vector<std::string>{"r0"});
  f.packer->Stepping("r0", 10, 2, 2);
  f.packer->Update("r0", Footprint{kGiB, 0});
  EXPECT_TRUE(f.Admit(10.5).empty()) << "its memory is not read yet: half a warm-up after its first step";
  const auto ahead = f.Admit(11);
  ASSERT_EQ(Keys(ahead), std::vector<std::string>{"r1"});
  EXPECT_TRUE(ahead[0].growth);
  EXPECT_EQ(f.packer->TakeNotes(),
            std::vector<std::string>{"gpu0: 1 run started ahead: 10.0-s start-ups overlap the runs' measurement"});
  EXPECT_TRUE(f.Admit(12).empty()) << "one step ahead at a time";
  f.packer->Measured("r0", 14, Footprint{kGiB, 0}, f.rates, 2.0);
  EXPECT_TRUE(f.Admit(14).empty()) << "r1 is adopted as the step's newcomer; nothing more starts";
  EXPECT_TRUE(f.packer->View()[0].probing);
  f.packer->Stepping("r1", 21, 2, 2);
  f.packer->Measured("r1", 25, Footprint{kGiB, 0}, f.rates, 2.0);
  EXPECT_EQ(f.packer->View()[0].proven, 2);
  ASSERT_FALSE(f.rates.windows.empty());
  EXPECT_EQ(f.rates.windows.front(), (std::pair<double, double>{19, 21})) << "before the newcomer trained";
}

// While a check is pending, the next step's newcomer starts up so that it trains as the check ends; it joins the next
// step once that check proves its degree.
TEST(PackerAhead, TheNextStepsNewcomerStartsUpWhileTheCheckBeforeItRuns) {
  AheadFixture f(6);
  f.Admit(0);
  f.packer->Stepping("r0", 10, 2, 2);
  f.packer->Measured("r0", 14, Footprint{kGiB, 0}, f.rates, 2.0);
  ASSERT_EQ(Keys(f.Admit(14)), std::vector<std::string>{"r1"}) << "an ordinary growth step";
  f.packer->Stepping("r1", 24, 2, 2);
  EXPECT_TRUE(f.Admit(24.5).empty());
  EXPECT_EQ(Keys(f.Admit(25)), std::vector<std::string>{"r2"}) << "ahead of the degree-2 check, due at 28 s";
  f.rates.slow_after = 24;
  f.rates.after = 0.6;  // +20%: proven, and the next step stays one newcomer (no burst)
  f.packer->Measured("r1", 28, Footprint{kGiB, 0}, f.rates, 2.0);
  EXPECT_EQ(f.packer->View()[0].proven, 2);
  EXPECT_TRUE(f.Admit(28).empty()) << "r2 is the degree-3 step's newcomer";
  f.packer->Stepping("r2", 35, 2, 2);
  f.packer->Measured("r2", 39, Footprint{kGiB, 0}, f.rates, 2.0);
  EXPECT_EQ(f.packer->View()[0].proven, 3);
}

// A check that does not prove the degree leaves the run started ahead of it a plain run above the proven degree:
// it is never judged as a newcomer, and growth waits for it to end.
TEST(PackerAhead, ARunStartedAheadOfADegreeThatDidNotPayJoinsNoStep) {
  AheadFixture f(6);
  f.Admit(0);
  f.packer->Stepping("r0", 10, 2, 2);
  f.packer->Measured("r0", 14, Footprint{kGiB, 0}, f.rates, 2.0);
  f.Admit(14);
  f.packer->Stepping("r1", 24, 2, 2);
  ASSERT_EQ(Keys(f.Admit(25)), std::vector<std::string>{"r2"});
  f.rates.slow_after = 24;
  f.rates.after = 0.4;  // r0 at 40% with r1 beside it: degree 2 trains less than 1 did
  f.packer->Measured("r1", 28, Footprint{kGiB, 0}, f.rates, 2.0);
  EXPECT_EQ(f.packer->View()[0].proven, 1);
  EXPECT_TRUE(f.Admit(28).empty());
  EXPECT_FALSE(f.packer->View()[0].probing) << "r2 is no newcomer";
  f.packer->Stepping("r2", 35, 2, 2);
  f.packer->Measured("r2", 39, Footprint{kGiB, 0}, f.rates, 2.0);
  EXPECT_EQ(f.packer->View()[0].proven, 1);
  EXPECT_TRUE(f.Admit(40).empty());
}

// A newcomer started ahead is checked for memory as a growth newcomer: against the first run's footprint so far when
// nothing of the shape is measured yet.
TEST(PackerAhead, ANewcomerStartedAheadMustFitTheMemoryTheFirstRunHolds) {
  AheadFixture f(4);
  f.Admit(0);
  f.packer->Stepping("r0", 10, 2, 2);
  f.packer->Update("r0", Footprint{30 * kGiB, 0});
  EXPECT_TRUE(f.Admit(11, 30 * kGiB).empty()) << "30 GiB more, plus the margin, is not free";
  EXPECT_EQ(f.Admit(12, 50 * kGiB).size(), 1u);
}

// Off, and on the CPU device (whose runs start within a fraction of a second), nothing starts ahead.
TEST(PackerAhead, NothingStartsAheadWhenOffOrOnTheCpu) {
  for (const auto& [on, kind] : {std::pair{false, DeviceKind::kGpu}, std::pair{true, DeviceKind::kCpu}}) {
    AheadFixture f(4, on, kind);
    f.Admit(0);
    f.packer->Stepping("r0", 10, 2, 2);
    EXPECT_TRUE(f.Admit(11).empty());
    EXPECT_TRUE(f.Admit(13).empty());
  }
}

}  // namespace
}  // namespace sat::sweep
