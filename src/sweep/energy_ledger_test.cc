#include "sweep/energy_ledger.h"

#include <gtest/gtest.h>

#include "telemetry/test_energy.h"

namespace sat::sweep {
namespace {

using telemetry::CounterAt;
using telemetry::NothingAt;
using telemetry::PowerAt;

TEST(EnergyLedger, AnAttemptAloneGetsItsDevicesEnergyOverItsLife) {
  EnergyLedger ledger;
  ledger.Read(0, CounterAt(0, 250));
  ledger.Begin(1, 0, 0.2);
  for (double t = 1; t <= 10; t += 1) ledger.Read(0, CounterAt(t, 250));
  // Ended between readings: the last 0.4 s at the latest power.
  const std::optional<double> j = ledger.End(1, 10.4);
  ASSERT_TRUE(j);
  EXPECT_NEAR(*j, 250 * (10.4 - 0.2), 1e-9);
  EXPECT_NEAR(*ledger.DeviceJoules(0), 2500, 1e-9);
}

TEST(EnergyLedger, AttemptsSharingADeviceSplitItsPowerEquallyWhileTheyOverlap) {
  EnergyLedger ledger;
  ledger.Read(0, CounterAt(0, 300));
  ledger.Begin(1, 0, 0);
  ledger.Read(0, CounterAt(2, 300));
  ledger.Begin(2, 0, 2.5);  // between readings: alone for [2, 2.5], shared from then
  ledger.Read(0, CounterAt(4, 300));
  ledger.Read(0, CounterAt(6, 300));
  const double first = *ledger.End(1, 6);
  ledger.Read(0, CounterAt(8, 300));
  const double second = *ledger.End(2, 8);
  // 1: alone [0, 2.5] then half of [2.5, 6]; 2: half of [2.5, 6] then alone [6, 8].
  EXPECT_NEAR(first, 300 * 2.5 + 150 * 3.5, 1e-9);
  EXPECT_NEAR(second, 150 * 3.5 + 300 * 2, 1e-9);
  // Together: the device's energy over the time either ran.
  EXPECT_NEAR(first + second, *ledger.DeviceJoules(0), 1e-9);
}

TEST(EnergyLedger, AnAttemptEndingBetweenReadingsStillCountsInTheSplitOfThatInterval) {
  EnergyLedger ledger;
  ledger.Read(0, CounterAt(0, 200));
  ledger.Begin(1, 0, 0);
  ledger.Begin(2, 0, 0);
  ledger.Read(0, CounterAt(1, 200));
  // 1 ends at 1.5: [1, 1.5] estimated at 200 W shared by two.
  EXPECT_NEAR(*ledger.End(1, 1.5), 100 * 1 + 100 * 0.5, 1e-9);
  ledger.Read(0, CounterAt(2, 200));
  // 2: half of [0, 1.5], then alone [1.5, 2].
  EXPECT_NEAR(*ledger.End(2, 2), 100 * 1.5 + 200 * 0.5, 1e-9);
}

TEST(EnergyLedger, DevicesAreSeparateAndAGapInReadingsIsCoveredByTheNextOne) {
  EnergyLedger ledger;
  ledger.Read(0, CounterAt(0, 100));
  ledger.Read(1, CounterAt(0, 400));
  ledger.Begin(1, 0, 0);
  ledger.Begin(2, 1, 0);
  ledger.Read(0, CounterAt(1, 100));
  ledger.Read(0, NothingAt(2));  // NVML failed once
  ledger.Read(0, CounterAt(3, 100));
  ledger.Read(1, CounterAt(3, 400));
  EXPECT_NEAR(*ledger.End(1, 3), 300, 1e-9);
  EXPECT_NEAR(*ledger.End(2, 3), 1200, 1e-9);
}

TEST(EnergyLedger, PowerOnlyDevicesIntegrateTheDrawAndADeviceWithoutReadingsGivesNoEnergy) {
  EnergyLedger ledger;
  ledger.Read(0, PowerAt(0, 100));
  ledger.Begin(1, 0, 0);
  ledger.Read(0, PowerAt(1, 300));
  EXPECT_NEAR(*ledger.End(1, 1), 200, 1e-9);
  // A GPU that reports neither counter nor power: unknown, never 0.
  ledger.Begin(2, 5, 0);
  ledger.Read(5, NothingAt(1));
  ledger.Read(5, NothingAt(2));
  EXPECT_FALSE(ledger.End(2, 2));
  EXPECT_FALSE(ledger.DeviceJoules(5));
  EXPECT_FALSE(ledger.End(99, 2));  // never begun
}

// A GPU that stops reporting is not charged its last power for the whole silence: the attempts it covers have
// unknown energy. A counter still measures a long gap exactly.
TEST(EnergyLedger, APowerReadingOlderThanTheGapLimitIsNotCarriedForward) {
  EnergyLedger ledger(2);
  ledger.Read(0, PowerAt(0, 300));
  ledger.Begin(1, 0, 0);
  ledger.Read(0, PowerAt(1, 300));
  for (double t = 2; t < 60; t += 1) ledger.Read(0, NothingAt(t));  // silent from here
  EXPECT_FALSE(ledger.End(1, 60)) << "59 s at a power read a minute ago";

  // Silent, then reporting again: the silence between two powers is not interpolated either.
  ledger.Begin(2, 0, 60);
  ledger.Read(0, PowerAt(61, 300));
  ledger.Read(0, PowerAt(62, 300));
  EXPECT_FALSE(ledger.End(2, 62));

  // Within the limit the latest power stands, as before.
  ledger.Begin(3, 0, 62);
  ledger.Read(0, PowerAt(63, 300));
  EXPECT_NEAR(*ledger.End(3, 64.5), 300 * 2.5, 1e-9);

  EnergyLedger counted(2);
  counted.Read(0, CounterAt(0, 200));
  counted.Begin(1, 0, 0);
  counted.Read(0, NothingAt(30));
  counted.Read(0, CounterAt(60, 200));
  EXPECT_NEAR(*counted.End(1, 60), 200 * 60, 1e-9);
}

}  // namespace
}  // namespace sat::sweep
