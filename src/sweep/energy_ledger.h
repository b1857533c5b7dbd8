// The energy each attempt of a sweep used, from its device's energy readings (a GPU's NVML energy counter, else
// its power draw; the CPU packages' RAPL counter for a CPU sweep).
//
// NVML has no per-process energy, so a device shared by several attempts is split by a rule: at every instant
// the device's power is shared equally among the attempts live on it. Between two readings the power counts as
// constant (the interval's energy over its length), and each attempt gets that power times the time it was live
// in the interval, divided by how many were live then. An attempt that ends between readings gets its last part
// (since the device's latest reading) at the device's latest power, an estimate; the next reading's interval is
// then split among the others as if it were still there for that part. A device's time with no attempt is
// nobody's. The joules of the attempts on a device therefore add up to the device's energy while any ran, up to
// those estimated last parts.
//
// Readings become joules through telemetry/energy.h. A reading without a counter or power (NVML failed once) is
// skipped: the next one covers the gap, exactly by a counter, by power only when the gap is at most max_gap_s. A
// longer silence of a power-only device, or an attempt ending longer than max_gap_s after its device's latest
// reading, is not estimated from a power that old: the attempts it covers have unknown energy (n/a, and the
// sweep's Energy line counts them as without a reading). A device that never gave a reading while an attempt lived
// leaves that attempt's energy unknown too (never 0).
//
// Times are CLOCK_MONOTONIC seconds, in order per device. Plain data and arithmetic: no I/O, not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "telemetry/energy.h"

namespace sat::sweep {

using telemetry::EnergyReading;

class EnergyLedger {
 public:
  // `max_gap_s`: the longest silence a power reading is carried over (a few of the caller's sampling intervals).
  explicit EnergyLedger(double max_gap_s = 5) : max_gap_s_(max_gap_s) {}

  // Attempt `attempt` runs on `device` (any key: the sweep's device number) from `t`.
  void Begin(int64_t attempt, int device, double t);
  // A reading of `device`. The first one of a device only sets where its energy counts from.
  void Read(int device, const EnergyReading& reading);
  // Attempt `attempt` ended at `t`: its joules (see above), nullopt when unknown. Unknown attempts: nullopt.
  std::optional<double> End(int64_t attempt, double t);

  // The device's energy from its first reading to its latest, attempts or not; nullopt before two readings.
  std::optional<double> DeviceJoules(int device) const;

 private:
  struct Presence {
    int64_t attempt = 0;
    double from = 0;              // where the next credit starts: the start, or the device's latest reading
    std::optional<double> to;     // the end, once ended (its share up to here was estimated then)
  };
  struct Device {
    std::optional<EnergyReading> last;  // the latest reading with a counter or a power
    std::optional<double> watts;        // the mean power over the latest interval, else the latest power reading
    std::optional<double> total_j;
    std::vector<Presence> presences;    // live attempts, and those ended since `last`
  };
  struct Account {
    int device = 0;
    double joules = 0;
    bool known = false;  // some interval or estimate was credited
    bool gap = false;    // part of its time had no reading to go by: its energy is unknown
  };
  // The live presences that began before `t1` lose their energy: the device was silent too long up to t1.
  void MarkGap(const std::vector<Presence>& presences, double t1);
  // Credits `power_w` over [t0, t1] to the live presences covering it, split equally at each instant among all
  // the presences covering it (an ended one counts in the split, and gets nothing).
  void Credit(const std::vector<Presence>& presences, double t0, double t1, double power_w);

  std::map<int, Device> devices_;
  std::map<int64_t, Account> accounts_;
  double max_gap_s_;
};

}  // namespace sat::sweep
