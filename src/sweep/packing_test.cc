#include "sweep/packing.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>

namespace sat::sweep {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

// Rates as a function of the run and the window's end; the packer asks for windows before and after an admission.
class FakeRates final : public RateSource {
 public:
  std::function<WindowRates(const std::string& key, double t1)> rate = [](const std::string&, double) {
    return WindowRates{};
  };
  WindowRates Rates(const std::string& key, double, double t1) const override { return rate(key, t1); }
};

DeviceInfo Cpu() { return DeviceInfo{"cpu", DeviceKind::kCpu, -1}; }
DeviceInfo Gpu(int i) { return DeviceInfo{"gpu" + std::to_string(i), DeviceKind::kGpu, i}; }

DeviceState Memory(uint64_t capacity, uint64_t free) { return DeviceState{capacity, free}; }

Footprint Mem(uint64_t bytes, double cpu = 0) { return Footprint{bytes, cpu}; }

std::vector<std::string> Keys(const std::vector<Admission>& admitted) {
  std::vector<std::string> keys;
  for (const auto& a : admitted) keys.push_back(a.key);
  return keys;
}

class PackerTest : public testing::Test {
 protected:
  explicit PackerTest(std::vector<DeviceInfo> devices = {Cpu()}) : packer_(std::move(devices), Params()) {}

  // One newcomer at a time, as most rules below are checked; the slow start has tests of its own.
  static PackingParams Params(double burst_gain = std::numeric_limits<double>::infinity()) {
    PackingParams p;
    p.window_s = 2;
    p.max_per_device = 6;
    p.burst_gain = burst_gain;
    return p;
  }
  void Enqueue(int n, const std::string& shape = "") {
    for (int i = 0; i < n; ++i) packer_.Enqueue("r" + std::to_string(next_), next_, shape), ++next_;
  }
  std::vector<std::string> Admit(double now, DeviceState state = Memory(100 * kGiB, 90 * kGiB)) {
    return Keys(packer_.Admit(now, std::vector<DeviceState>(packer_.devices().size(), state), host_));
  }

  // Starts r0 and grows the device to `degree` runs, each admission judged with incumbents keeping their rate
  // (a gain); every run there is measured at the end. Returns the time reached.
  double Grow(int degree) {
    rates_.rate = [](const std::string&, double) { return WindowRates{100.0, std::nullopt}; };
    double now = 0;
    for (int k = 0; k < degree; ++k, now += 5) {
      const auto admitted = Admit(now);
      EXPECT_EQ(admitted.size(), 1u);
      if (!admitted.empty()) packer_.Measured(admitted[0], now + 5, Mem(kGiB), rates_);
    }
    EXPECT_EQ(packer_.View()[0].proven, degree);
    return now;
  }

  Packer packer_;
  HostState host_;
  FakeRates rates_;
  int next_ = 0;
};

TEST_F(PackerTest, AnEmptyDeviceTakesTheEarliestRunAndGrowsOnlyOnceItIsMeasured) {
  Enqueue(3);
  EXPECT_EQ(Admit(0), std::vector<std::string>{"r0"});
  EXPECT_TRUE(Admit(1).empty()) << "r0 is not measured yet";
  packer_.Measured("r0", 5, Mem(kGiB), rates_);
  const auto admitted = packer_.Admit(5, {Memory(100 * kGiB, 90 * kGiB)}, host_);
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].key, "r1");
  EXPECT_TRUE(admitted[0].growth);
  EXPECT_TRUE(Admit(6).empty()) << "one newcomer at a time";
  EXPECT_EQ(packer_.queued(), 1u);
  EXPECT_EQ(packer_.live(), 2u);
}

TEST_F(PackerTest, AGainProvesTheDegreeAndRunsThatLeaveAreReplacedAtOnce) {
  Enqueue(5);
  // Incumbents keep their throughput while newcomers join: each admission adds a whole run's progress.
  Grow(3);
  // Two runs leave: the proven degree is restored at once, without waiting for measurements.
  packer_.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  packer_.Left("r1", LeaveReason::kFinished, Mem(kGiB));
  const auto refill = packer_.Admit(16, {Memory(100 * kGiB, 90 * kGiB)}, host_);
  EXPECT_EQ(Keys(refill), (std::vector<std::string>{"r3", "r4"}));
  EXPECT_FALSE(refill[0].growth);
  EXPECT_EQ(packer_.TakeNotes(), (std::vector<std::string>{"cpu: degree 2 raised the progress rate by +100%",
                                                           "cpu: degree 3 raised the progress rate by +50%"}));
}

TEST_F(PackerTest, ASmallGainHoldsTheDegreeForThatShape) {
  Enqueue(6);
  Grow(2);
  Admit(10);  // r2, the third
  // With three runs each incumbent drops to 60% of its rate: the total falls.
  rates_.rate = [](const std::string&, double t1) { return WindowRates{t1 <= 10 ? 100.0 : 60.0, std::nullopt}; };
  packer_.Measured("r2", 15, Mem(kGiB), rates_);
  EXPECT_EQ(packer_.View()[0].proven, 2);
  EXPECT_TRUE(packer_.View()[0].poor);
  EXPECT_EQ(packer_.HeldDegrees(), (std::map<std::string, int>{{"", 2}}));
  EXPECT_TRUE(Admit(16).empty());
  // A run leaves: back at two, and three is not tried again.
  packer_.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  EXPECT_TRUE(Admit(17).empty());
  packer_.Left("r1", LeaveReason::kFinished, Mem(kGiB));
  EXPECT_EQ(Admit(18), std::vector<std::string>{"r3"});
  const auto notes = packer_.TakeNotes();
  ASSERT_GE(notes.size(), 2u);
  EXPECT_EQ(notes[1], "cpu: degree 3 changed the progress rate by only -10.0% (under 5%): 3 runs is not formed again");
}

TEST_F(PackerTest, APoorMixOfOneShapeDoesNotStopAnotherShape) {
  packer_.Enqueue("a0", 0, "kind=cpu");
  packer_.Enqueue("a1", 1, "kind=cpu");
  packer_.Enqueue("a2", 2, "kind=cpu");
  packer_.Enqueue("b0", 3, "kind=io");
  Admit(0);
  packer_.Measured("a0", 5, Mem(kGiB), rates_);
  Admit(5);
  rates_.rate = [](const std::string&, double t1) { return WindowRates{t1 <= 5 ? 100.0 : 50.0, std::nullopt}; };
  packer_.Measured("a1", 10, Mem(kGiB), rates_);  // two cpu runs gain nothing: {cpu, cpu} is poor
  EXPECT_EQ(packer_.HeldDegrees(), (std::map<std::string, int>{{"kind=cpu", 1}}));
  packer_.Left("a1", LeaveReason::kFinished, Mem(kGiB));
  // a2 would form {cpu, cpu} again; b0, later in the queue, goes first, a window after a1 left (a0's rate before
  // the step must be its rate alone). Its shape was never measured, so its estimate is the largest footprint measured.
  EXPECT_TRUE(Admit(11).empty());
  EXPECT_EQ(Admit(13), std::vector<std::string>{"b0"});
}

TEST_F(PackerTest, MemoryMustFitWithTheMarginAndInWhatIsFree) {
  Enqueue(4);
  const DeviceState roomy = Memory(10 * kGiB, 10 * kGiB);
  Admit(0, roomy);
  packer_.Measured("r0", 5, Mem(4 * kGiB), rates_);
  // (4 + 4) x 1.1 = 8.8 GiB fits 10 GiB; but only 4 GiB free (another process took memory) does not.
  EXPECT_TRUE(Admit(5, Memory(10 * kGiB, 4 * kGiB)).empty());
  EXPECT_EQ(Admit(6, Memory(10 * kGiB, 6 * kGiB)), std::vector<std::string>{"r1"});
  packer_.Measured("r1", 10, Mem(4 * kGiB), rates_);  // no rate signal: counts as a gain
  EXPECT_EQ(packer_.View()[0].proven, 2);
  // (4 + 4 + 4) x 1.1 = 13.2 GiB does not fit 10 GiB.
  EXPECT_TRUE(Admit(11, Memory(10 * kGiB, 2 * kGiB)).empty());
}

TEST_F(PackerTest, OutOfMemoryWhileSharedCapsTheDeviceUntilItEmpties) {
  Enqueue(5);
  Grow(2);
  Admit(10);
  EXPECT_EQ(packer_.Left("r2", LeaveReason::kOutOfMemory, Mem(kGiB)), 3);
  EXPECT_EQ(packer_.View()[0].cap, 2);
  packer_.Enqueue("r2", 2, "");
  EXPECT_TRUE(Admit(11).empty()) << "capped at the two runs still there";
  packer_.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  EXPECT_EQ(Admit(12), std::vector<std::string>{"r2"}) << "refilled up to the cap";
  packer_.Left("r1", LeaveReason::kFinished, Mem(kGiB));
  packer_.Left("r2", LeaveReason::kFinished, Mem(kGiB));
  EXPECT_FALSE(packer_.View()[0].cap) << "an empty device starts afresh";
}

TEST_F(PackerTest, ARunThatLeavesDuringAGainCheckMakesItInconclusive) {
  Enqueue(4);
  Grow(2);
  Admit(10);  // r2 under test
  packer_.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  packer_.Measured("r2", 15, Mem(kGiB), rates_);
  EXPECT_EQ(packer_.View()[0].proven, 2);
  EXPECT_FALSE(packer_.View()[0].poor);
  const auto notes = packer_.TakeNotes();
  EXPECT_EQ(notes.back(), "cpu: degree 3: gain check inconclusive (a run left meanwhile)");
}

TEST_F(PackerTest, CpuUseBelowTheQuietLevelIsNoSignal) {
  Enqueue(3);
  Admit(0);
  packer_.Measured("r0", 5, Mem(kGiB), rates_);
  Admit(5);
  // 2% CPU before, 1% after: noise, not a slowdown.
  rates_.rate = [](const std::string&, double t1) { return WindowRates{std::nullopt, t1 <= 5 ? 2.0 : 1.0}; };
  packer_.Measured("r1", 10, Mem(kGiB), rates_);
  EXPECT_EQ(packer_.View()[0].proven, 2);
  // A CPU-bound incumbent halved by the newcomer is a signal: no gain.
  Admit(10);
  rates_.rate = [](const std::string&, double t1) { return WindowRates{std::nullopt, t1 <= 10 ? 100.0 : 60.0}; };
  packer_.Measured("r2", 15, Mem(kGiB), rates_);
  EXPECT_TRUE(packer_.View()[0].poor);
}

TEST_F(PackerTest, ARunThatReportsStepsIsJudgedByItsThroughputNeverItsCpu) {
  Enqueue(4);
  Admit(0);
  packer_.Measured("r0", 5, Mem(kGiB), rates_);
  Admit(5);
  // r0 keeps its 100 samples/s while its CPU use falls from four cores to one (the newcomer takes the host's
  // cores from its data preparation): throughput says the degree is a gain, CPU would have said the opposite.
  rates_.rate = [](const std::string&, double t1) {
    return WindowRates{100.0, t1 <= 5 ? 400.0 : 100.0, /*reports_steps=*/true};
  };
  packer_.Measured("r1", 10, Mem(kGiB), rates_);
  EXPECT_EQ(packer_.View()[0].proven, 2);
  EXPECT_FALSE(packer_.View()[0].poor);
  // Before the next admission the incumbents were starting up (no throughput yet, CPU busy); after it they train
  // slower on less CPU. Their start-up is no measurement: nothing to compare, so nothing shows harm.
  Admit(10);
  rates_.rate = [](const std::string&, double t1) {
    if (t1 <= 10) return WindowRates{std::nullopt, 400.0, true};
    return WindowRates{80.0, 100.0, true};
  };
  packer_.Measured("r2", 15, Mem(kGiB), rates_);
  EXPECT_EQ(packer_.View()[0].proven, 3);
  EXPECT_EQ(packer_.TakeNotes().back(),
            "cpu: degree 3: its runs show no rate to compare (no throughput, little CPU); growth continues");
}

TEST_F(PackerTest, HostPressureStopsGrowth) {
  Enqueue(3);
  Admit(0);
  packer_.Measured("r0", 5, Mem(kGiB), rates_);
  host_.mem_total_bytes = 16 * kGiB;
  host_.mem_available_bytes = kGiB;
  EXPECT_TRUE(Admit(5).empty());
  EXPECT_EQ(packer_.TakeNotes(), std::vector<std::string>{"cpu: not growing: host RAM 1.0 GiB available of 16.0 GiB"});
  // Host CPU does not stop the CPU device: its gain check judges CPU contention.
  host_.mem_available_bytes = 8 * kGiB;
  host_.cpu_util_pct = 99;
  EXPECT_EQ(Admit(6), std::vector<std::string>{"r1"});
}

class GpuPackerTest : public PackerTest {
 protected:
  GpuPackerTest() : PackerTest({Gpu(0), Gpu(1)}) {}
};

TEST_F(GpuPackerTest, EachGpuTakesARunAndHostCpuStopsGpuGrowth) {
  Enqueue(4);
  EXPECT_EQ(Admit(0), (std::vector<std::string>{"r0", "r1"}));
  packer_.Measured("r0", 5, Mem(kGiB), rates_);
  host_.cpu_util_pct = 95;
  EXPECT_TRUE(Admit(5).empty());
  host_.cpu_util_pct = 50;
  const auto admitted = packer_.Admit(6, std::vector<DeviceState>(2, Memory(80 * kGiB, 70 * kGiB)), host_);
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].device, 0);
  EXPECT_EQ(admitted[0].key, "r2");
}

// The slow start's tests: one CPU device for up to 16 runs, `runs` of them queued as r0, r1, ...
Packer SlowStartPacker(int runs) {
  PackingParams params;
  params.window_s = 2;
  params.max_per_device = 16;
  Packer packer({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  for (int i = 0; i < runs; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
  return packer;
}

// Slow start: a step that pays far above noise lets the next admit twice as many at once, judged together; the
// first step that pays less goes back to one at a time, and a burst that does not pay holds the degree below it.
TEST(PackerSlowStart, DoublesWhileGainsAreFarAboveNoiseThenBacksOff) {
  Packer packer = SlowStartPacker(16);
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  FakeRates rates;
  // Up to 4 runs nobody slows; with 8 (from t = 31) each runs at 40% of its rate before: the progress rate falls.
  rates.rate = [](const std::string&, double t1) { return WindowRates{t1 <= 31 ? 100.0 : 40.0, std::nullopt}; };
  auto admit = [&](double now) { return packer.Admit(now, roomy, HostState{}); };
  ASSERT_EQ(admit(0).size(), 1u);
  packer.Measured("r0", 5, Mem(kGiB), rates);
  ASSERT_EQ(admit(5).size(), 1u);  // degree 2, one newcomer
  packer.Measured("r1", 10, Mem(kGiB), rates);
  EXPECT_EQ(packer.View()[0].burst, 2);
  auto two = admit(10);  // degree 4: two at once
  ASSERT_EQ(two.size(), 2u);
  EXPECT_TRUE(two[0].growth && two[1].growth);
  EXPECT_TRUE(admit(11).empty()) << "the burst is judged before the next step";
  packer.Measured(two[0].key, 15, Mem(kGiB), rates);
  EXPECT_EQ(packer.View()[0].proven, 2) << "judged once the last newcomer is measured";
  packer.Measured(two[1].key, 16, Mem(kGiB), rates);
  EXPECT_EQ(packer.View()[0].proven, 4);
  EXPECT_EQ(packer.View()[0].burst, 4);
  auto four = admit(31);  // degree 8: four at once, and each run drops to 40%
  ASSERT_EQ(four.size(), 4u);
  for (const auto& a : four) packer.Measured(a.key, 36, Mem(kGiB), rates);
  EXPECT_EQ(packer.View()[0].proven, 4);
  EXPECT_EQ(packer.View()[0].burst, 1);
  EXPECT_EQ(packer.HeldDegrees(), (std::map<std::string, int>{{"", 7}}));
  const auto notes = packer.TakeNotes();
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0], "cpu: degree 2 raised the progress rate by +100%; the next step tries 2 more at once");
  EXPECT_EQ(notes[1], "cpu: degree 4 (2 newcomers at once) raised the progress rate by +100% (+41% each); the next "
                      "step tries 4 more at once");
  EXPECT_EQ(notes[2], "cpu: degree 8 (4 newcomers at once) changed the progress rate by only -20.0%, -5.4% each "
                      "(under 5% each): 8 runs is not formed again");
}

// A burst left inconclusive (a run ended meanwhile) proved nothing: the runs above the proven degree end before the
// next growth step, which starts from the degree shown worthwhile.
TEST(PackerSlowStart, GrowthResumesFromTheProvenDegreeAfterAnInconclusiveBurst) {
  Packer packer = SlowStartPacker(8);
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  FakeRates rates;
  rates.rate = [](const std::string&, double) { return WindowRates{100.0, std::nullopt}; };
  auto admit = [&](double now) { return packer.Admit(now, roomy, HostState{}); };
  ASSERT_EQ(admit(0).size(), 1u);
  packer.Measured("r0", 5, Mem(kGiB), rates);
  ASSERT_EQ(admit(5).size(), 1u);
  packer.Measured("r1", 10, Mem(kGiB), rates);
  ASSERT_EQ(admit(10).size(), 2u);  // degree 4, a burst of two
  packer.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  packer.Measured("r2", 15, Mem(kGiB), rates);
  packer.Measured("r3", 15, Mem(kGiB), rates);
  EXPECT_EQ(packer.View()[0].proven, 2);
  EXPECT_TRUE(admit(16).empty()) << "three runs, one above the proven two: no step from there";
  packer.Left("r1", LeaveReason::kFinished, Mem(kGiB));
  EXPECT_TRUE(admit(17).empty()) << "the window before a step must not span the departure";
  const auto next = admit(19);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_TRUE(next[0].growth);
}

// Rule 9, quick growth on the CPU device. A run's window rates: `rate` samples/s, read from `steps` training steps.
WindowRates Steady(double rate, double steps = 20) {
  WindowRates r;
  r.samples_per_s = rate;
  r.reports_steps = true;
  r.steps = steps;
  return r;
}

// On the H200 (docs/benchmarks.md, third lease) each run's torch kept the host's 16 cores 90-99% busy: growth waited
// on the host CPU for 10-15 s after degree 2 read +36-40%, though 8 at once, as saturated, beat 4 by 1.19x. A step
// that paid the slow start's burst gain shows that the CPU's load is not what limits the runs: the next step goes
// ahead whatever the host CPU reads, and a reason whose readings move is noted once.
TEST(PackerGpuGrowth, AStepThatEarnedABurstGrowsWhateverTheHostCpuReads) {
  for (const double pair_rate : {19.0, 12.0}) {  // +90% (a burst earned), +20% (one at a time)
    SCOPED_TRACE(pair_rate);
    PackingParams params;
    params.window_s = 2;
    params.max_per_device = 16;
    Packer packer({Gpu(0)}, params);
    for (int i = 0; i < 8; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
    const std::vector<DeviceState> roomy = {Memory(100 * kGiB, 90 * kGiB)};
    FakeRates rates;  // two steps a window: too coarse for an early verdict; each run at pair_rate / 2 once paired
    rates.rate = [pair_rate](const std::string&, double t1) { return Steady(t1 <= 1.3 ? 100 : pair_rate * 5, 2); };
    ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
    packer.Stepping("r0", 0.1);
    packer.Trained(0, 0.2, 0, 0, true);
    packer.Trained(0, 1.2, 10, 10, true);  // alone: 10 samples/s over 1 s
    packer.Measured("r0", 1.2, Mem(kGiB), rates, 1.0);
    ASSERT_EQ(packer.Admit(1.2, roomy, HostState{}).size(), 1u);
    packer.Stepping("r1", 1.3);
    packer.Trained(0, 1.5, 13, 13, true);  // r1 in its warm-up
    packer.Trained(0, 2.1, 13 + pair_rate * 0.6, 13 + pair_rate * 0.6, true);
    packer.Measured("r1", 2.2, Mem(kGiB), rates, 1.0);
    ASSERT_EQ(packer.View()[0].proven, 2);
    packer.TakeNotes();
    HostState busy;
    busy.cpu_util_pct = 95;
    const auto grown = packer.Admit(4, roomy, busy);
    if (pair_rate > 18) {
      EXPECT_EQ(grown.size(), 2u) << "the burst goes ahead on a busy CPU";
      EXPECT_TRUE(packer.TakeNotes().empty());
    } else {
      EXPECT_TRUE(grown.empty());
      busy.cpu_util_pct = 97;
      EXPECT_TRUE(packer.Admit(4.5, roomy, busy).empty());
      EXPECT_EQ(packer.TakeNotes(), std::vector<std::string>{"gpu0: not growing: host CPU 95% busy (limit 90%)"})
          << "97% is the same reason";
    }
  }
}

// A rated run lets growth go on before it is measured, and a gain far above noise settles the check as soon as the
// newcomer is rated, from half a window: 1, 2, 4 runs within two half windows of training.
TEST(PackerQuickGrowth, ARatedRunLetsGrowthGoOnAndAGainFarAboveNoiseSettlesEarly) {
  Packer packer = SlowStartPacker(8);
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  FakeRates rates;
  rates.rate = [](const std::string&, double) { return Steady(100); };
  auto admit = [&](double now) { return packer.Admit(now, roomy, HostState{}); };
  ASSERT_EQ(admit(0).size(), 1u);
  EXPECT_TRUE(admit(0.5).empty()) << "r0 has no rate yet";
  packer.Rated("r0", 1.2, Mem(kGiB), rates, 1.0);
  const auto second = admit(1.2);
  ASSERT_EQ(second.size(), 1u) << "rated: its footprint so far stands for its shape's";
  EXPECT_TRUE(second[0].growth);
  packer.Rated("r1", 1.6, Mem(kGiB), rates, 1.0);
  EXPECT_EQ(packer.View()[0].proven, 2) << "+100%; at its lowest reading (1 - 1/20) / (1 + 1/20), less 0.05: +71%";
  EXPECT_FALSE(packer.View()[0].probing);
  EXPECT_TRUE(admit(1.6).empty()) << "half a window after r1 joined, so that the next check's before-window sees 2 runs";
  EXPECT_EQ(admit(1.7).size(), 2u) << "the slow start's burst";
  EXPECT_EQ(packer.TakeNotes(), std::vector<std::string>{"cpu: degree 2 raised the progress rate by +100%, read early "
                                                         "(over 0.5 s); the next step tries 2 more at once"});
  // The check's measurement later changes nothing: it was settled.
  packer.Measured("r1", 3.0, Mem(kGiB), rates, 1.0);
  EXPECT_EQ(packer.View()[0].proven, 2);
  EXPECT_TRUE(packer.TakeNotes().empty());
  // Two newcomers nobody slows: +100% in all, +41% each; at the lowest reading less 0.05, +31% each: early again.
  packer.Rated("r2", 2.9, Mem(kGiB), rates, 1.0);
  EXPECT_TRUE(packer.View()[0].probing) << "judged once both newcomers are rated";
  packer.Rated("r3", 2.9, Mem(kGiB), rates, 1.0);
  EXPECT_EQ(packer.View()[0].proven, 4);
  EXPECT_EQ(packer.View()[0].burst, 4);
}

// A gain within reach of noise, or read from windows of a few steps, waits for the full check once the newcomer is
// measured; and a GPU device grows only from measured runs (rule 2), whatever is rated.
TEST(PackerQuickGrowth, NearNoiseOrCoarseWindowsWaitForTheFullCheck) {
  for (const bool coarse : {false, true}) {
    SCOPED_TRACE(coarse ? "two steps a window" : "+20%");
    Packer packer = SlowStartPacker(8);
    const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
    FakeRates rates;
    // Near noise: after r1's admission at 1.2, r0 keeps 60% of its rate (+20% in all). Coarse: it keeps all of it.
    rates.rate = [&](const std::string&, double t1) {
      return Steady(t1 <= 1.2 || coarse ? 100 : 60, coarse ? 2 : 10);
    };
    ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
    packer.Rated("r0", 1.2, Mem(kGiB), rates, 1.0);
    ASSERT_EQ(packer.Admit(1.2, roomy, HostState{}).size(), 1u);
    packer.Rated("r1", 1.9, Mem(kGiB), rates, 1.0);
    EXPECT_TRUE(packer.View()[0].probing) << "not settled early";
    EXPECT_TRUE(packer.Admit(2.0, roomy, HostState{}).empty()) << "no step while a check is pending";
    packer.Measured("r1", 3.2, Mem(kGiB), rates, 1.0);
    EXPECT_EQ(packer.View()[0].proven, 2) << "the full check: +20% (or +100%) is above min_gain";
    const auto notes = packer.TakeNotes();
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].find("read early"), std::string::npos) << notes[0];
  }
  PackingParams params;
  params.window_s = 1;
  Packer gpu({DeviceInfo{"gpu0", DeviceKind::kGpu, 0}}, params);
  gpu.Enqueue("r0", 0, "");
  gpu.Enqueue("r1", 1, "");
  FakeRates rates;
  rates.rate = [](const std::string&, double) { return Steady(100); };
  const std::vector<DeviceState> roomy = {DeviceState{80 * kGiB, 70 * kGiB}};
  ASSERT_EQ(gpu.Admit(0, roomy, HostState{}).size(), 1u);
  gpu.Rated("r0", 1.2, Mem(kGiB), rates, 1.0);
  EXPECT_TRUE(gpu.Admit(1.2, roomy, HostState{}).empty()) << "GPU memory settles during warm-up: rule 2 holds";
}

// A run that leaves during the check leaves it to the full check, which calls it inconclusive; and a run rated
// with a footprint too large for what the host has free blocks growth as a measured one would.
TEST(PackerQuickGrowth, ADepartureOrTheRatedFootprintStopsAQuickStep) {
  Packer packer = SlowStartPacker(8);
  FakeRates rates;
  rates.rate = [](const std::string&, double) { return Steady(100); };
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
  packer.Rated("r0", 1.2, Mem(kGiB), rates, 1.0);
  ASSERT_EQ(packer.Admit(1.2, roomy, HostState{}).size(), 1u);
  packer.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  packer.Rated("r1", 1.9, Mem(kGiB), rates, 1.0);
  EXPECT_TRUE(packer.View()[0].probing) << "a departure is the full check's to report";
  packer.Measured("r1", 3.0, Mem(kGiB), rates, 1.0);
  EXPECT_NE(packer.TakeNotes().back().find("inconclusive"), std::string::npos);

  Packer big = SlowStartPacker(2);
  ASSERT_EQ(big.Admit(0, roomy, HostState{}).size(), 1u);
  big.Rated("r0", 1.2, Mem(60 * kGiB), rates, 1.0);
  EXPECT_TRUE(big.Admit(1.2, {DeviceState{100 * kGiB, 40 * kGiB}}, HostState{}).empty())
      << "60 GiB so far, 40 free: the newcomer would not fit";
}

// Rule 10: the device's own progress at each degree, gathered in pieces between runs that come and go, proves a
// degree its gain check could not (a run left meanwhile); spans with a newcomer starting up, with a change of unknown
// time, or too short count for nothing, and a degree that did not pay is neither proven nor marked poor.
TEST(PackerQuickGrowth, ADegreeTheRunsTrainedFasterAtIsProvenFromTheirOwnProgress) {
  struct Case {
    const char* name;
    double pair_rate;  // samples/s of the two runs together (one alone: 10)
    double pair_s;     // how long they train together before r0 leaves
    bool timed;        // r0's departure is told its time
    int proven;
  };
  for (const Case& c : {
           Case{"faster", 19, 0.6, true, 2},      // 1.9 x 0.95 >= 1.05
           Case{"no faster", 10.8, 0.6, true, 1},  // 1.08 x 0.95 < 1.05
           Case{"too short", 19, 0.4, true, 1},   // under half a window held
       }) {
    SCOPED_TRACE(c.name);
    Packer packer = SlowStartPacker(8);
    const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
    FakeRates rates;  // two steps a window: too coarse for an early verdict
    rates.rate = [](const std::string&, double) { return Steady(100, 2); };
    ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
    packer.Trained(0, 0, 0, 0, true);  // r0 starting up: no run trains
    packer.Stepping("r0", 0.1);
    packer.Trained(0, 0.2, 0, 0, true);
    packer.Trained(0, 1.2, 10, 10, true);  // alone: 10 samples/s over 1 s
    packer.Rated("r0", 1.2, Mem(kGiB), rates, 1.0);
    ASSERT_EQ(packer.Admit(1.2, roomy, HostState{}).size(), 1u);
    packer.Trained(0, 1.3, 11, 11, true);  // r1 starting up: r0 alone still trains
    packer.Stepping("r1", 1.3);
    packer.Trained(0, 1.5, 13, 13, true);  // r1 in its warm-up: counts for nothing, though r0 trains
    const double t = 1.5 + c.pair_s;
    packer.Trained(0, t, 13 + c.pair_rate * c.pair_s, 13 + c.pair_rate * c.pair_s, true);
    EXPECT_EQ(packer.View()[0].proven, c.proven);
    EXPECT_EQ(packer.View()[0].probing, c.proven < 2) << "a check a proof answers ends";
    if (c.proven == 2) {
      EXPECT_EQ(packer.View()[0].burst, 2) << "+80% each, past burst_gain";
      EXPECT_EQ(packer.TakeNotes().back(),
                "cpu: degree 2 trained +90% faster than degree 1 (held 0.6 s and 1.1 s, read from the runs' own "
                "progress as they came and went); the next step tries 2 more at once");
    }
    EXPECT_TRUE(packer.HeldDegrees().empty()) << "never a poor mix";
  }
  // A check an incumbent's end cut short puts its degree on trial: the device is refilled to it at once, and pieces
  // of progress there add up (0.3 s before the departure, 0.3 s once the refill is warm), unless the departure's
  // time is unknown, which voids the span it falls in. A degree on trial that trains slower is shown poor.
  struct Trial {
    const char* name;
    bool timed;
    double pair_rate;  // samples/s of two runs together (one alone: 10)
    double until;      // the last report
    int proven;
    bool poor;
  };
  for (const Trial& c : {Trial{"timed", true, 19, 2.0, 2, false}, Trial{"untimed", false, 19, 2.0, 1, false},
                         Trial{"slower", true, 8, 3.0, 1, true}}) {
    SCOPED_TRACE(c.name);
    Packer packer = SlowStartPacker(8);
    const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
    FakeRates rates;
    rates.rate = [](const std::string&, double) { return Steady(100, 2); };
    // Four steps a sample: fine enough to read in 0.3-s pieces.
    auto trained = [&](double t, double samples) { packer.Trained(0, t, samples, 4 * samples, true); };
    ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
    packer.Stepping("r0", 0);
    trained(0, 0);
    trained(1, 10);
    packer.Rated("r0", 1, Mem(kGiB), rates, 1.0);
    ASSERT_EQ(packer.Admit(1, roomy, HostState{}).size(), 1u);
    packer.Stepping("r1", 1);
    trained(1.2, 12);
    if (!c.timed) packer.Left("r0", LeaveReason::kFinished, Mem(kGiB));
    trained(1.5, 12 + 0.3 * c.pair_rate);
    if (c.timed) packer.Left("r0", LeaveReason::kFinished, Mem(kGiB), 1.5);
    const auto refill = packer.Admit(1.5, roomy, HostState{});
    ASSERT_EQ(refill.size(), 1u) << "degree 2 on trial: refilled at once";
    EXPECT_FALSE(refill[0].growth);
    packer.Stepping(refill[0].key, 1.5);
    trained(1.7, 12 + 0.5 * c.pair_rate);  // r2 not warm yet
    trained(c.until, 12 + (c.until - 1.2) * c.pair_rate);
    EXPECT_EQ(packer.View()[0].proven, c.proven);
    EXPECT_EQ(packer.HeldDegrees().count(""), c.poor ? 1u : 0u);
  }
}

// A full check whose windows hold a few steps each cannot tell -2% from +20%: even its highest reading must fall short
// of min_gain for a poor verdict, else the degree goes on trial and the runs' own progress decides it (rule 10). With
// 200 steps a window the same -2% marks the mix poor.
TEST(PackerFullCheck, WindowsTooCoarseToTellPutTheDegreeOnTrialNotPoor) {
  for (const double steps : {6.0, 200.0}) {
    SCOPED_TRACE(steps);
    PackingParams params;
    params.window_s = 2;
    Packer packer({Gpu(0)}, params);
    for (int i = 0; i < 3; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
    const std::vector<DeviceState> roomy = {DeviceState{80 * kGiB, 70 * kGiB}};
    FakeRates rates;
    // The incumbent's rate: 100 before the newcomer's admission at 3 s, 49 after (the pair: -2%).
    rates.rate = [&](const std::string&, double t1) { return Steady(t1 <= 3 ? 100 : 49, steps); };
    ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
    packer.Stepping("r0", 0.5);
    packer.Trained(0, 1, 10, 10, true);
    packer.Trained(0, 3, 30, 30, true);  // alone for 2 s: the proven degree's progress, readable
    packer.Measured("r0", 3, Mem(kGiB), rates, 2.0);
    ASSERT_EQ(packer.Admit(3, roomy, HostState{}).size(), 1u);
    packer.Stepping("r1", 3.5);
    packer.TakeNotes();
    packer.Measured("r1", 8, Mem(kGiB), rates, 2.0);
    const std::vector<std::string> notes = packer.TakeNotes();
    ASSERT_FALSE(notes.empty());
    if (steps < 10) {
      EXPECT_NE(notes.back().find("undecided (-2.0%, but up to +24.7%"), std::string::npos) << notes.back();
      EXPECT_TRUE(packer.HeldDegrees().empty()) << "not poor";
    } else {
      EXPECT_NE(notes.back().find("changed the progress rate by only -2.0%"), std::string::npos) << notes.back();
      EXPECT_EQ(packer.HeldDegrees().at(""), 1);
    }
  }
}

// Rule 11: where a shape's start-up (10 s here) is at least half its training (16 s), a run within a start-up of its
// expected end (its first step plus the training) no longer counts toward the degree: its successor starts then, as a
// refill, so that its start-up ends as the run leaves. Sooner, or where start-ups are short against training (30 s),
// the same moment is a growth step as before.
TEST(PackerStartups, ARunNearItsEndGetsItsSuccessorAheadWhereStartUpsAreLong) {
  struct Case {
    const char* name;
    double training_s, at;
    bool successor;
  };
  for (const Case& c : {Case{"near its end", 16, 16, true}, Case{"not yet", 16, 14, false},
                        Case{"short start-ups", 30, 16, false}}) {
    SCOPED_TRACE(c.name);
    PackingParams params;
    params.window_s = 2;
    Packer packer({DeviceInfo{"gpu0", DeviceKind::kGpu, 0}}, params);
    for (int i = 0; i < 4; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
    const std::vector<DeviceState> roomy = {DeviceState{80 * kGiB, 70 * kGiB}};
    ASSERT_EQ(packer.Admit(0, roomy, HostState{}).size(), 1u);
    packer.Stepping("r0", 10);
    EXPECT_EQ(packer.StartupSeconds(""), 10);
    packer.Finished("", c.training_s, 100 * c.training_s);  // an earlier run of the shape trained this long
    FakeRates rates;
    rates.rate = [](const std::string&, double) { return Steady(100); };
    packer.Measured("r0", 13, Mem(kGiB), rates, 2.0);
    const auto next = packer.Admit(c.at, roomy, HostState{});
    ASSERT_EQ(next.size(), 1u) << "one run: a successor, or one growth step";
    EXPECT_EQ(next[0].growth, !c.successor);
    EXPECT_EQ(packer.View()[0].probing, !c.successor);
    if (c.successor) {
      // The successor restores the degree: growth does not wait for it to be measured, only for half a window.
      const auto grown = packer.Admit(c.at + 1, roomy, HostState{});
      ASSERT_EQ(grown.size(), 1u);
      EXPECT_TRUE(grown[0].growth);
    }
  }
}

// A degree an earlier sweep settled on starts at once, one run short of it, and growth checks the last one.
TEST(PackerRemembered, StartsOneShortOfTheRememberedDegreeAndChecksTheLast) {
  PackingParams params;
  params.window_s = 2;
  Packer packer({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  for (int i = 0; i < 6; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
  packer.Remember("", RememberedShape{4, true, kGiB, false, false});
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  auto first = packer.Admit(0, roomy, HostState{});
  ASSERT_EQ(first.size(), 3u);
  EXPECT_FALSE(first[1].growth);
  EXPECT_TRUE(packer.Admit(1, roomy, HostState{}).empty()) << "the fourth waits for the three to be measured";
  FakeRates rates;
  rates.rate = [](const std::string&, double) { return WindowRates{100.0, std::nullopt}; };
  for (const auto& a : first) packer.Measured(a.key, 5, Mem(kGiB), rates);
  auto fourth = packer.Admit(5, roomy, HostState{});
  ASSERT_EQ(fourth.size(), 1u);
  EXPECT_TRUE(fourth[0].growth);
  EXPECT_EQ(packer.TakeNotes().front(),
            "cpu: starting at 3 runs at once: an earlier sweep of this command on this machine held 4; one gain check "
            "verifies it");
  for (const auto& a : fourth) packer.Measured(a.key, 10, Mem(kGiB), rates);
  EXPECT_EQ(packer.View()[0].proven, 4);
  EXPECT_TRUE(packer.Admit(11, roomy, HostState{}).empty()) << "5 did not pay before: it is not tried again";
  // A degree only proven (that sweep ended still growing) is where growth goes on from.
  Packer going({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  for (int i = 0; i < 6; ++i) going.Enqueue("r" + std::to_string(i), i, "");
  going.Remember("", RememberedShape{3, false, kGiB, false, false});
  EXPECT_EQ(going.Admit(0, roomy, HostState{}).size(), 3u);
  // Runs too short to be measured start at the remembered degree itself.
  Packer quick({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  for (int i = 0; i < 6; ++i) quick.Enqueue("r" + std::to_string(i), i, "");
  quick.Remember("", RememberedShape{2, true, kGiB, true, false});
  EXPECT_EQ(quick.Admit(0, roomy, HostState{}).size(), 2u);
  // What this sweep learnt goes to the next one's record: the degree held (what it was told holds, while nothing
  // new contradicts it), else the most proven.
  EXPECT_EQ(quick.Learnt().at("").degree, 2);
  EXPECT_TRUE(quick.Learnt().at("").held);
  EXPECT_TRUE(quick.Learnt().at("").short_runs);
}

// bench/sweep_bench.sh with 2-s runs: a burst to 4 was admitted and its runs ended before its gain check, so the
// record kept 2. Which degree trained fastest is read from the runs' own ends: degree x the median run rate.
TEST(PackerRemembered, TheRecordKeepsTheDegreeThatTrainedFastestInHindsight) {
  PackingParams params;
  Packer packer({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  for (int i = 0; i < 4; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
  packer.Remember("", RememberedShape{2, false, kGiB, true, false});
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  auto pair = packer.Admit(0, roomy, HostState{});
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_EQ(packer.OneShapeDegree(pair[0].key), 2) << "placed in one tick, both start at 2";
  EXPECT_EQ(packer.OneShapeDegree(pair[1].key), 2);
  packer.Left(pair[0].key, LeaveReason::kFinished, Mem(kGiB));
  auto refill = packer.Admit(3, roomy, HostState{});
  ASSERT_EQ(refill.size(), 1u);
  EXPECT_EQ(packer.OneShapeDegree(refill[0].key), 2);
  EXPECT_EQ(packer.OneShapeDegree("nobody"), 0);

  // Per run, samples a second at each degree: two runs at least, else the degree is not read.
  for (double r : {300.0, 310.0}) packer.Finished("", 2, 2 * r, 1);
  for (double r : {290.0, 300.0}) packer.Finished("", 2, 2 * r, 2);
  EXPECT_EQ(packer.Learnt().at("").degree, 2);
  for (double r : {250.0, 260.0}) packer.Finished("", 2, 2 * r, 4);  // 1,020 against 590: +73%
  packer.Finished("", 2, 2 * 200.0, 6);                                // one run: not read
  for (double r : {120.0, 125.0}) packer.Finished("", 2, 2 * r, 8);  // 980: less than 4 gave
  EXPECT_EQ(packer.Learnt().at("").degree, 4);
  EXPECT_FALSE(packer.Learnt().at("").held);

  // Runs that all ended at one degree compare it with nothing: it is not taken as proven.
  Packer alone({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  alone.Enqueue("a", 0, "");
  ASSERT_EQ(alone.Admit(0, roomy, HostState{}).size(), 1u);
  alone.Measured("a", 5, Mem(kGiB), FakeRates{});
  for (double r : {250.0, 260.0}) alone.Finished("", 2, 2 * r, 5);
  EXPECT_EQ(alone.Learnt().at("").degree, 1);
}

// Runs that end after the same time whatever they trained are on the clock: they go one per device.
TEST(PackerClock, RunsOnTheClockGoOnePerDevice) {
  PackingParams params;
  params.window_s = 2;
  params.burst_gain = std::numeric_limits<double>::infinity();
  Packer packer({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  for (int i = 0; i < 6; ++i) packer.Enqueue("r" + std::to_string(i), i, "");
  const std::vector<DeviceState> roomy = {DeviceState{100 * kGiB, 90 * kGiB}};
  FakeRates rates;
  rates.rate = [](const std::string&, double t1) { return WindowRates{t1 <= 5 ? 100.0 : 70.0, std::nullopt}; };
  packer.Admit(0, roomy, HostState{});
  packer.Measured("r0", 5, Mem(kGiB), rates);
  packer.Admit(5, roomy, HostState{});
  packer.Measured("r1", 10, Mem(kGiB), rates);  // +40%: degree 2 pays
  EXPECT_EQ(packer.View()[0].proven, 2);
  // r0 trained alone for 5 s, r1 shared from its start: both ran 8 s.
  packer.Left("r0", LeaveReason::kFinished, Mem(kGiB));
  packer.Finished("", 8.0, 660);
  EXPECT_TRUE(packer.Clocked().empty()) << "one run tells nothing";
  EXPECT_EQ(packer.Admit(8, roomy, HostState{}).size(), 1u) << "refilled to the proven degree meanwhile";
  packer.Left("r1", LeaveReason::kFinished, Mem(kGiB));
  packer.Finished("", 8.1, 560);
  ASSERT_EQ(packer.Clocked().size(), 1u);
  EXPECT_EQ(packer.Clocked().at(""), "2 runs ended after 8.0-8.1 s of training while they trained 560 to 660 samples");
  EXPECT_TRUE(packer.Admit(13, roomy, HostState{}).empty()) << "r2 is running: no neighbour joins it";
  EXPECT_TRUE(packer.Learnt().at("").clocked);
  // The same runs doing a fixed amount of work (they took longer when they shared) are not on the clock.
  Packer work({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  work.Finished("", 8.0, 600);
  work.Finished("", 10.5, 600);
  EXPECT_TRUE(work.Clocked().empty());
  // time_budget_runs: pack packs them anyway, and says so.
  params.pack_clocked = true;
  Packer pack({DeviceInfo{"cpu", DeviceKind::kCpu, -1}}, params);
  pack.Finished("", 8.0, 660);
  pack.Finished("", 8.1, 560);
  EXPECT_EQ(pack.Clocked().size(), 1u);
  EXPECT_NE(pack.TakeNotes().back().find("they are packed anyway (time_budget_runs: pack)"), std::string::npos);
}

TEST(HostPressure, NamesEverySaturatedResource) {
  PackingParams params;
  HostState host;
  EXPECT_TRUE(HostPressure(host, params, true).none());
  EXPECT_EQ(HostPressure(host, params, true).why, "");
  host.cpu_util_pct = 93;
  host.disk_busy_pct = 97;
  host.net_util = 0.95;
  const Pressure without_cpu = HostPressure(host, params, false);
  EXPECT_EQ(without_cpu.why, "a disk is 97% busy; a network link carries 95% of its speed");
  EXPECT_EQ(without_cpu.resources, Pressure::kDisk | Pressure::kNetwork);
  const Pressure with_cpu = HostPressure(host, params, true);
  EXPECT_EQ(with_cpu.why, "host CPU 93% busy (limit 90%); a disk is 97% busy; a network link carries 95% of its speed");
  EXPECT_EQ(with_cpu.resources, Pressure::kCpu | Pressure::kDisk | Pressure::kNetwork);
}

}  // namespace
}  // namespace sat::sweep
