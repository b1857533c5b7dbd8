// The packing policy of a real sweep: which queued run starts on which device, and when. It follows the
// simulator's measured packing (sim/measured_packing.h), with what a live machine adds:
//   1. an empty device takes the earliest queued run: alone, a run is never at risk, and it gets measured;
//   2. growth (one more run than the device has proven worthwhile) waits until every run there is measured
//      and no gain check is pending, so each newcomer's memory and effect are seen before the next
//      (task-spooler's race cannot happen); it needs the memory of the runs there plus the newcomer's
//      estimate, times (1 + margin), to fit the device, the estimate times (1 + margin) to fit what is free
//      now, and no host resource near saturation (RAM, disk, network; and CPU for GPU devices);
//   3. the gain check: once the newcomer is measured (which is after its first training step, when it reports
//      steps: its start-up never counts), each incumbent's rate over the last window is compared with its rate
//      over the window before the admission: its training throughput when it reports steps (never its CPU
//      use), its CPU use when it reports none. Co-located runs share one slowdown (the simulator's
//      interference model), so with f the mean of the incumbents' after/before ratios and n incumbents, the
//      device's progress rate (each run's throughput over its solo throughput, summed) grew by
//      f (n + 1) / n - 1. At least min_gain: the new degree is proven. Below: the mix of shapes on the
//      device is poor, and no device grows into a mix containing a poor one (for one shape: its degree is
//      held one lower). A run that left meanwhile makes the check inconclusive; no signal at all (runs that
//      neither report throughput in both windows nor use measurable CPU) counts as a gain, since nothing
//      shows harm;
//   4. refill: a device below its proven degree (a run left) takes a queued run at once, without waiting
//      for measurements, when the memory fits with estimates for the runs not yet measured: a known
//      configuration is restored, nothing new is tried;
//   5. out of memory on a shared device: the run goes back to the queue and the device's degree is capped
//      at the runs still there, until it empties.
// A run's memory estimate is the largest footprint measured for its shape, or of any shape while its own was
// never measured; with nothing measured yet, only empty devices take runs.
//
// Shapes: runs whose footprints should be alike (the same model and batch size) share a shape; the controller
// names it from the parameters listed in `saturate.shape` (all runs share one shape without that list).
//
// Pure bookkeeping: no clock (callers pass `now`), no processes, no I/O. Not thread-safe.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sweep/meter.h"

namespace sat::sweep {

enum class DeviceKind { kGpu, kCpu };

struct DeviceInfo {
  std::string name;  // "gpu0", or "cpu" for the host's cores
  DeviceKind kind = DeviceKind::kCpu;
  int gpu_index = -1;  // NVML index of a GPU device
};

// A device as the controller sees it now; unset: unknown.
struct DeviceState {
  std::optional<uint64_t> capacity_bytes;  // GPU memory, or the host's RAM for the CPU device
  std::optional<uint64_t> free_bytes;      // free GPU memory, or the host's available RAM
};

// The host as the controller sees it now; unset: unknown (never counts as saturated).
struct HostState {
  std::optional<double> cpu_util_pct;  // all cores, 100 = every core busy
  std::optional<uint64_t> mem_total_bytes, mem_available_bytes;
  std::optional<double> disk_busy_pct;  // the busiest disk
  std::optional<double> net_util;       // the busiest link's traffic over its speed, 0..1
};

struct PackingParams {
  double margin = 0.1;              // memory: (runs + newcomer) x (1 + margin) must fit
  double min_gain = 0.05;           // keep growing while each admission raises the progress rate this much
  int max_per_device = 8;           // never more runs than this on one device
  double window_s = 3;              // the span of the before/after rates (MeterOptions::window_s)
  double host_cpu_limit_pct = 90;   // GPU devices grow only below this host CPU use
  double mem_reserve = 0.1;         // share of host RAM that must stay available
  double disk_busy_limit_pct = 90;  // growth stops while a disk is this busy
  double net_limit = 0.9;           // growth stops while a link carries this share of its speed
  double quiet_cpu_pct = 10;        // below this CPU use (a run without steps), a run's rate is no signal
};

// Why the host is too busy for another run ("host RAM 0.8 GiB available of 16.0 GiB; a disk is 97% busy"), or
// empty when it is not.
// `check_cpu`: CPU counts (for GPU devices; on the CPU device the gain check judges CPU contention itself).
std::string HostPressure(const HostState& host, const PackingParams& params, bool check_cpu);

// The window rates of live runs, for the gain check; the controller answers from its RunMeters.
class RateSource {
 public:
  virtual ~RateSource() = default;
  virtual WindowRates Rates(const std::string& key, double t0, double t1) const = 0;
};

enum class LeaveReason { kFinished, kOutOfMemory, kOther };

struct Admission {
  std::string key;
  int device = 0;       // index into the devices given to the Packer
  bool growth = false;  // beyond the device's proven degree (a gain check follows)
};

class Packer {
 public:
  explicit Packer(std::vector<DeviceInfo> devices, PackingParams params);

  const std::vector<DeviceInfo>& devices() const { return devices_; }

  // A run waits for a device; runs are taken by `index` (lowest first). The key must not be live or queued.
  void Enqueue(const std::string& key, int64_t index, const std::string& shape);
  size_t queued() const { return queued_shape_.size(); }
  size_t live() const { return where_.size(); }

  // The runs to start now, each already placed on its device. `devices` is parallel to devices().
  std::vector<Admission> Admit(double now, const std::vector<DeviceState>& devices, const HostState& host);

  // The run became measured (RunMeter::Measured): learn its shape's footprint, and run the gain check when
  // it was a growth newcomer.
  void Measured(const std::string& key, double now, const Footprint& footprint, const RateSource& rates);

  // The run's latest footprint, measured or not (memory grows during training).
  void Update(const std::string& key, const Footprint& footprint);

  // The run left its device. `footprint`: its last footprint, learnt for its shape when it finished before it
  // was measured. Returns how many runs the device held, this one included.
  int Left(const std::string& key, LeaveReason reason, const Footprint& footprint);

  // Decisions since the last call, one line each, for the live view and the log.
  std::vector<std::string> TakeNotes();

  struct RunView {
    std::string key;
    int64_t index = 0;
    std::string shape;
    bool measured = false;
    Footprint footprint;
  };
  struct DeviceView {
    DeviceInfo info;
    std::vector<RunView> runs;  // in admission order
    int proven = 1;             // degree shown worthwhile
    std::optional<int> cap;     // after an out-of-memory failure
    bool probing = false;       // a gain check is pending
    bool poor = false;          // holds a poor mix: takes no newcomer until a run leaves
  };
  std::vector<DeviceView> View() const;

  // Shape -> the degree held on devices holding only that shape, for shapes whose growth stopped.
  std::map<std::string, int> HeldDegrees() const;

 private:
  using Mix = std::vector<std::string>;  // shapes of the runs on a device, sorted
  struct Live {
    std::string key;
    int64_t index = 0;
    std::string shape;
    int device = 0;
    bool measured = false;
    Footprint footprint;
  };
  struct Shape {
    bool measured = false;
    uint64_t mem_bytes = 0;  // the largest measured
  };
  struct Probe {
    std::string newcomer;  // empty: none pending
    double admitted_t = 0;
    std::vector<std::string> incumbents;
    long departures = 0;
  };
  struct Plan {
    std::vector<std::string> runs;  // keys, in admission order
    int proven = 1;
    int cap = INT_MAX;
    long departures = 0;
    Probe probe;
    std::string blocked;  // the host pressure last noted
  };

  Mix MixOf(int device) const;
  // Whether `mix` contains a poor mix: one that includes `shape`, or any when `shape` is unset.
  bool HasPoorMix(const Mix& mix, const std::optional<std::string>& shape) const;
  std::optional<uint64_t> Estimate(const std::string& shape) const;
  // The earliest queued run (index, key) that may join the occupied `device` now.
  std::optional<std::pair<int64_t, std::string>> Pick(int device, const DeviceState& state) const;
  void Place(const std::string& key, int64_t index, int device, double now, bool growth);
  // Notes why growth of `device` is blocked, once per change of reason.
  void Block(int device, const std::string& why);
  void Learn(const std::string& shape, const Footprint& footprint);
  void Evaluate(int device, double now, const RateSource& rates);

  std::vector<DeviceInfo> devices_;
  PackingParams params_;
  std::vector<Plan> plans_;
  std::map<std::string, std::set<std::pair<int64_t, std::string>>> waiting_;  // shape -> (index, key)
  std::map<std::string, std::string> queued_shape_;                           // key -> shape
  std::map<std::string, Live> where_;                                         // live runs by key
  std::map<std::string, Shape> shapes_;
  std::set<Mix> poor_mixes_;
  std::vector<std::string> notes_;
};

}  // namespace sat::sweep
