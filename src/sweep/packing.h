// The packing policy of a real sweep: which queued run starts on which device, and when. It follows the
// simulator's measured packing (sim/measured_packing.h), with what a live machine adds:
//   1. an empty device takes the earliest queued run: alone, a run is never at risk, and it gets measured;
//   2. growth (one more run than the device has proven worthwhile) waits until every run there is measured
//      and no gain check is pending, so each newcomer's memory and effect are seen before the next
//      (task-spooler's race cannot happen); it needs the memory of the runs there plus the newcomer's
//      estimate, times (1 + margin), to fit the device, the estimate times (1 + margin) to fit what is free
//      now, and no host resource near saturation (RAM, disk, network; and CPU for GPU devices); and it starts from
//      the proven degree: runs above it (a check left inconclusive) end first, so that every check compares one
//      more run with a degree shown worthwhile; and it waits half a window after the device's runs last changed,
//      its check's before-window (a window at most) starting after the change, so that it sees one degree;
//   3. the gain check: once the newcomer is measured (which is after its first training step, when it reports
//      steps: its start-up never counts), each incumbent's rate over the last window is compared with its rate
//      over the window before the admission: its training throughput when it reports steps (never its CPU
//      use), its CPU use when it reports none. Co-located runs share one slowdown (the simulator's
//      interference model), so with f the mean of the incumbents' after/before ratios and n incumbents, the
//      device's progress rate (each run's throughput over its solo throughput, summed) grew by
//      f (n + 1) / n - 1. At least min_gain: the new degree is proven. Below: the mix of shapes on the
//      device is poor, and no device grows into a mix containing a poor one (for one shape: its degree is
//      held one lower); but only when even the highest reading (each window's count off by up to a step: twice
//      the spread above the mean) is below too, else the check is undecided: its windows were too coarse to tell,
//      and on a device of one shape whose progress at the proven degree was read, the degree goes on trial (rule 10)
//      rather than being judged by noise. A run that left meanwhile makes the check inconclusive; no signal at all
//      (runs that neither report throughput in both windows nor use measurable CPU) counts as a gain, since nothing
//      shows harm;
//   4. refill: a device below its proven degree (a run left) takes a queued run at once, without waiting
//      for measurements, when the memory fits with estimates for the runs not yet measured: a known
//      configuration is restored, nothing new is tried;
//   5. out of memory on a shared device: the run goes back to the queue and the device's degree is capped
//      at the runs still there, until it empties;
//   6. slow start: a growth step whose gain is far above noise (at least burst_gain per newcomer) lets the next
//      step admit twice as many newcomers at once, judged together (the device's progress rate must grow by
//      min_gain per newcomer, compounded); the first step that pays less goes back to one newcomer at a time, and a
//      burst that does not pay marks its mix poor like a single newcomer would (held one lower);
//   7. remembered degrees (Remember, from sweep/degree_record.h): a shape an earlier sweep of the same command
//      held at degree D on this machine (D + 1 did not pay) starts at D - 1 runs at once on an empty device (memory
//      checked against the remembered footprint), grows to D with one gain check, and does not try D + 1 again: the
//      ramp costs one check instead of D - 1. A degree proven but never held (that sweep ended still growing)
//      starts at D itself and grows on from there; runs remembered as too short to measure start at D unchecked.
//      A degree no gain check judged (a burst whose runs ended first) is recorded as proven when the runs that
//      finished at it trained faster together than at the degrees below (Learnt, HindsightDegree);
//   8. runs on the clock (sweep/clock_runs.h): a shape whose runs end after the same time whatever they trained
//      is a time-budgeted shape; packing would make each train less in the same time, so its runs go to empty
//      devices only (one per device), unless `pack_clocked`.
//   9. quick growth on the CPU device: there a run's memory is host RAM, which the host check guards at every
//      admission, so growth waits only until every run there is rated (RunMeter::Rated: its throughput over the last
//      two half windows agreed, so it is past any warm-up and the window before an admission is steady; Rated here),
//      its footprint so far standing for its shape's until one is measured. And a gain check ends early once its
//      newcomers are rated, when the incumbents' throughput over the last half window, against the window before
//      the admission, would pay burst_gain per newcomer even at its lowest reading (each window's rate off by a
//      whole step, from windows of at least early_steps steps) less early_margin: so far above noise that the
//      verdict, slow start included, is the one the full windows would give. Else the check waits for the
//      newcomers' measurement, as above. A sweep of CPU runs so takes its first steps within half windows rather
//      than warm-ups and windows. GPU devices keep rule 2: their memory settles during warm-up and the device is
//      not the host's to watch.
//  10. degrees read from the runs' own progress, on any device: the device's runs together trained so many samples
//      (Trained: those that left included) in the time it held each degree (the runs training: rule 11) with runs of
//      one shape, all of them past their warm-up. Once a degree above the proven one was held half a window in all,
//      as was the proven one, and trained faster than it, each added run paying min_gain compounded even at the
//      lowest reading less early_margin, it is proven, whatever its gain checks said. The lowest reading takes each run's count over
//      each piece as off by up to a step, independently: twice the spread of the sum; each run needs early_steps
//      steps. Where runs last a few seconds, a run leaves during nearly every check (inconclusive), yet each degree
//      is held long enough in pieces: a check an incumbent's end cut short puts the degree it tried on trial, and
//      the device is refilled to it (rule 4) until its progress there proves it, or shows it poor (even at its
//      highest reading, plus early_margin, under min_gain a run: the mix is poor, as a check's). A pending check it
//      answers ends; the burst doubles when each added run paid burst_gain at the lowest reading. A trial needs the
//      proven degree's progress readable already (else nothing could decide it). On a GPU, a trial's
//      refills are sized by the shape's measured footprint, as rule 4's are.
//  11. start-ups ahead (any device holding one shape): a run's start-up (from its start to its first training step:
//      the interpreter, the framework, a CUDA context) trains nothing and loads the device little. Once a run of
//      the shape has finished, its median start-up S and training time T are known; where S is at least T / 2, a
//      run within S of its expected end (its first step plus T) no longer counts toward its device's degree: its
//      successor starts now, so that its start-up ends as the run leaves. Where S outlasts a check, this is what lets
//      checks happen at all: a newcomer admitted after its neighbour is measured would find it gone when it starts
//      training. Rule 10's
//      degrees count the runs training (those that made their first step), not those still starting, and a check
//      cut short puts its degree on trial on a GPU too (its memory is known from the shape's measured runs).
//  12. start-ups ahead of a check (GPU devices holding one shape, `start_ahead`): a newcomer's start-up S (the shape's
//      median, once a run of it stepped) loads the device little, so it need not wait for the step before it to be
//      judged. When growth waits only for runs there to be measured (the first run's warm-up and window, or the
//      pending check's newcomers), every run there has stepped, and all will be measured within 0.9 S, the next step's
//      newcomers (as many as the pending step's, else the burst) start now, so that they begin training about as the
//      check they wait for ends: on the H200 the first run trained alone 14-16 s of an 86-s sweep. They count for no
//      degree while ahead; once the degree they were started ahead of is proven they become that step's newcomers, and
//      its check's before-window ends at their first training step, not at their start; if it is not proven, they are
//      plain runs above the proven degree (rule 2: they end first). Their memory is checked as a growth newcomer's,
//      against the shape's measured footprint, or, before one is measured, the largest its stepped runs hold (half a
//      warm-up after their first step: a first training step allocates weights, optimizer state and activations). A
//      check whose before-window holds less than half a window (a newcomer that stepped before its neighbours were
//      past their warm-up) is inconclusive.
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
#include <functional>
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
  double host_cpu_limit_pct = 90;   // GPU devices grow only below this host CPU use (not after a burst-earning step)
  double mem_reserve = 0.1;         // share of host RAM that must stay available
  double disk_busy_limit_pct = 90;  // growth stops while a disk is this busy
  double net_limit = 0.9;           // growth stops while a link carries this share of its speed
  double quiet_cpu_pct = 10;        // below this CPU use (a run without steps), a run's rate is no signal
  // A growth step that raised the progress rate by at least this much per newcomer doubles the next step's
  // newcomers (slow start); infinity: always one at a time.
  double burst_gain = 0.25;
  bool pack_clocked = false;        // pack runs on the clock anyway (spec saturate.time_budget_runs: pack)
  // Rule 9's early verdict: how much lower than its lowest reading (a step's error in each window) the
  // incumbents' after/before ratio may be while the step still pays burst_gain per newcomer (infinity: never
  // early), and the training steps each incumbent's windows must hold at least.
  double early_margin = 0.05;
  double early_steps = 4;
  bool start_ahead = true;  // rule 12 (off: every growth newcomer starts once the step before it is judged)
};

// What an earlier sweep of the same command learnt of a shape on this machine (sweep/degree_record.h).
struct RememberedShape {
  int degree = 1;           // the degree it settled on (held after a poor mix), or the most it proved
  bool held = false;        // growth stopped above `degree`: one more did not pay
  uint64_t mem_bytes = 0;   // the largest footprint measured of one run
  bool short_runs = false;  // its runs ended before they could be measured: start at `degree` without a check
  bool clocked = false;     // its runs stop on the clock (rule 8)
};

// The host resources too busy for another run: which (a bit each), and why in words ("host RAM 0.8 GiB available of
// 16.0 GiB; a disk is 97% busy"); none: the host is not.
struct Pressure {
  enum Resource : unsigned { kCpu = 1, kRam = 2, kDisk = 4, kNetwork = 8 };
  unsigned resources = 0;
  std::string why;
  bool none() const { return resources == 0; }
};
// `check_cpu`: CPU counts (for GPU devices; on the CPU device the gain check judges CPU contention itself).
Pressure HostPressure(const HostState& host, const PackingParams& params, bool check_cpu);

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
  // it was a growth newcomer, over windows of `window_s` (the run's own meter window; unset: params' window_s).
  void Measured(const std::string& key, double now, const Footprint& footprint, const RateSource& rates,
                std::optional<double> window_s = std::nullopt);
  // The run on the CPU device can be rated (RunMeter::Rated, rule 9): growth may go on past it, its footprint so far
  // stands for its shape's, and a gain check whose newcomers are all rated may end early, its after-window the last
  // half of `window_s`. Ignored on a GPU device, and for a run already measured.
  void Rated(const std::string& key, double now, const Footprint& footprint, const RateSource& rates,
             std::optional<double> window_s = std::nullopt);
  // The median training time of the runs of `shape` that ended on their own (Finished); nullopt before any.
  std::optional<double> RunSeconds(const std::string& shape) const;
  // The run made its first training step at `t` (rule 11): its start-up is over, and it counts among its device's
  // training runs from now. `warmup_s`, `window_s`: its meter's, so that it will be measured about warmup_s +
  // window_s after `t` (rule 12).
  void Stepping(const std::string& key, double t, double warmup_s = 0, double window_s = 0);
  // The median start-up of the runs of `shape` that made a first step; nullopt before any.
  std::optional<double> StartupSeconds(const std::string& shape) const;

  // The run's latest footprint, measured or not (memory grows during training).
  void Update(const std::string& key, const Footprint& footprint);

  // What an earlier sweep learnt of `shape` (rule 7). Before the first admission of that shape.
  void Remember(const std::string& shape, const RememberedShape& remembered);
  // A run of `shape` ended on its own (exit 0, not stopped): its wall time and the samples (else steps) it counted,
  // for rule 8. Runs that counted nothing are ignored. `degree`: the most runs its device held while it ran, all of
  // its shape (OneShapeDegree); 0 where unknown or mixed. Learnt() reads in hindsight which degree trained fastest.
  void Finished(const std::string& shape, double duration_s, std::optional<double> trained, int degree = 0);
  // For a live run: the runs its device has held since it started, where that never grew (a run that saw growth
  // ran at two degrees) and all were of its shape; else 0.
  int OneShapeDegree(const std::string& key) const;
  // Shapes whose runs stop on the clock, and why ("4 runs all ended after 8.0-8.1 s while they trained 610 to 940
  // samples").
  const std::map<std::string, std::string>& Clocked() const { return clocked_; }
  // Per shape, what this sweep learnt (for the record of the next sweep): the degree held, else the most proven on
  // a device holding that shape alone, or the higher degree whose finished runs trained faster together in hindsight
  // (HindsightDegree: a burst whose runs ended before its gain check); the largest footprint; whether its runs ended
  // before they were measured.
  std::map<std::string, RememberedShape> Learnt() const;

  // The run left its device. `footprint`: its last footprint, learnt for its shape when it finished before it
  // was measured. `now`: when (unset: unknown, and rule 10 takes nothing of the device's progress up to the next
  // Trained). Returns how many runs the device held, this one included.
  int Left(const std::string& key, LeaveReason reason, const Footprint& footprint,
           std::optional<double> now = std::nullopt);
  // Rule 10: the samples (steps for runs that count no samples) and the steps every run of `device` trained so far,
  // those that left included, at `now`; `warm`: every run there that made its first step (Stepping) is past its
  // warm-up (MeterOptions::warmup_s after that step). The span since the last call counts for the degree of runs
  // training now (rule 11: those still starting up count for none), so call it right before each change of the
  // device's runs (Admit, Left, Stepping) and often; a span the training runs changed in, or that began with one not
  // warm yet, counts for none.
  void Trained(int device, double now, double samples, double steps, bool warm);

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
    int burst = 1;              // newcomers the next growth step admits at once
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
    bool rated = false;  // rule 9: on the CPU device, rated before it was measured
    Footprint footprint;
    double placed_t = 0;
    std::optional<double> stepped_t;  // its first training step (rule 11)
    double warmup_s = 0, settled_t = 0;  // its meter's warm-up, and when it will be measured (rule 12)
    // Started ahead of a step (rule 12), not yet one of its newcomers: it counts for no degree until that step's
    // degree `ahead_of` is proven.
    bool ahead = false;
    int ahead_of = 0;
    bool successor = false;  // started ahead of a run's expected end (rule 11): growth does not wait for it
    int start = 1;           // runs on its device when it started (those placed in the same tick included)
    int peak = 1;            // the most runs its device held since it started
    bool one_shape = true;   // all of them of its shape
  };
  struct Shape {
    bool measured = false;
    uint64_t mem_bytes = 0;  // the largest measured
    int proven = 1;          // the most proven on a device holding this shape alone
    int finished = 0, finished_unmeasured = 0;  // runs that ended on their own; of those, before being measured
    std::vector<std::pair<double, double>> ended;  // (wall s, trained) of runs that ended on their own (rule 8)
    std::map<int, std::vector<double>> rate_at;    // degree -> trained per second of each run that ended at it
    std::vector<double> startups;                  // seconds from start to first step of each run that stepped
  };
  struct Probe {
    std::vector<std::string> newcomers;  // empty: none pending
    double admitted_t = 0;
    double steady_t = 0;  // the device's runs last changed before the admission: the before-window starts no sooner
    std::vector<std::string> incumbents;
    long departures = 0;
    int degree = 0;  // the degree it tries (rule 11: the runs not about to leave, the newcomers included)
    // Rule 12: its newcomers were started ahead, so the before-window ends at their first training step; `stepped`:
    // admitted_t is that step already.
    bool adopted = false, stepped = false;
  };
  struct Plan {
    std::vector<std::string> runs;  // keys, in admission order
    int proven = 1;
    int cap = INT_MAX;
    int burst = 1;  // newcomers the next growth step admits at once (rule 6)
    long departures = 0;
    Probe probe;
    unsigned blocked = 0;  // the host resources last noted as pressed (Pressure::Resource bits)
    // When its runs last changed (a placement, or the first Admit after a departure), and the window its runs are
    // judged over: a growth step waits half a window after a change, and its check's before-window (at most a window)
    // starts after the change, so that it sees one degree.
    double changed_t = -1e300;
    long departures_seen = 0;
    double window_s = 0;
    // Rule 10: the last Trained report, and when its runs last changed; `untimed`: a departure of unknown time since
    // the last report, so that the span up to the next counts for no degree.
    struct Report {
      double t = 0, samples = 0, steps = 0;
      bool warm = false;
      int training = 0;  // runs past their first step (rule 11)
    };
    std::optional<Report> trained;
    double touched_t = -1e300;
    bool untimed = false;
    // Rule 10: the degree a check tried when an incumbent's end cut it short; the device is refilled to it until its
    // progress proves it or shows it poor (0: none).
    int trial = 0;
    bool counted = false;  // the last span counted: the next, if it counts, continues its piece
  };
  // Rule 10: the seconds a device held `degree` runs of one shape, the samples and steps they trained meanwhile, and
  // in how many pieces (spans without a gap between them make one).
  struct Span {
    double seconds = 0, samples = 0, steps = 0;
    int pieces = 0;
  };

  // The window `plan`'s runs are judged over: their meters' (Reading), else the params'.
  double WindowOf(const Plan& plan) const { return plan.window_s > 0 ? plan.window_s : params_.window_s; }
  Mix MixOf(int device) const;
  // Rule 11: how long after its first step a run of `shape` is within a start-up of its expected end (its training
  // time less its start-up), where start-ups are at least half the training; the runs of `device` that are not
  // (all of them where it holds more than one shape), and their mix.
  std::optional<double> SuccessorAfter(const std::string& shape) const;
  std::vector<std::string> Counted(int device, double now) const;
  Mix CountedMix(int device, double now) const;
  // Whether `mix` contains a poor mix: one that includes `shape`, or any when `shape` is unset.
  bool HasPoorMix(const Mix& mix, const std::optional<std::string>& shape) const;
  std::optional<uint64_t> Estimate(const std::string& shape) const;
  // The earliest queued run (index, key) that may join the occupied `device` now.
  std::optional<std::pair<int64_t, std::string>> Pick(int device, const DeviceState& state, double now) const;
  // Whether one more run of `estimate` bytes fits `device` now, times (1 + margin): with the runs there (their
  // measured footprints, else their shape's estimate, or `provisional` where their shape has none yet, whose growth to
  // it the device's free memory does not show yet) within its capacity, and within what is free.
  bool Fits(int device, const DeviceState& state, uint64_t estimate, uint64_t provisional = 0) const;
  // Rule 12: the runs of `device` started ahead of a step and not yet its newcomers.
  std::vector<std::string> Ahead(int device) const;
  // Rule 12: starts the next step's newcomers on `device` ahead of the check that growth waits for, where it may.
  void StartAhead(int device, const DeviceState& state, double now, std::vector<Admission>& admitted);
  // Rule 12: the runs started ahead become the newcomers of the step to the next degree; returns how many.
  int Adopt(int device, double now);
  // `growth`: beyond the proven degree; the first newcomer of a step starts its gain check, later ones of the same
  // burst join it.
  void Place(const std::string& key, int64_t index, int device, double now, bool growth);
  // Notes why growth of `device` is blocked, once per change of the resources pressed.
  void Block(int device, const Pressure& pressure);
  void Learn(const std::string& shape, const Footprint& footprint);
  // Rule 7 for an empty device about to take a run of `shape`.
  void StartRemembered(int device, const std::string& shape);
  void Evaluate(int device, double now, const RateSource& rates, double window_s);
  // Rule 9: settles the pending check of `device` now if its gain is far above noise.
  void EarlyVerdict(int device, double now, const RateSource& rates, double window_s);
  // The incumbents' after/before rate ratios over [admitted - window_s, admitted] (from steady_t at the earliest)
  // and [after_t0, now]: their mean, the mean of each one's lowest reading a step's error in each window allows
  // (early verdicts only; else the mean), and the mean's highest reading (each window's count off by up to a step,
  // uniformly and independently: twice the spread above the mean; the mean where no window counts steps).
  struct Ratio {
    double mean = 0, low = 0, high = 0;
  };
  // Throughput where both windows have it, else CPU use above the quiet level for runs without steps. `min_steps` > 0
  // (an early verdict): throughput only, from windows of at least that many steps, for every incumbent. nullopt: no
  // incumbent gave a ratio (an early verdict: one did not).
  std::optional<Ratio> MeanRatio(const Probe& probe, const RateSource& rates, double window_s, double after_t0,
                                 double now, double min_steps) const;
  // Proves `degree` on `device` (for its shape too, when the device holds one shape).
  void MarkProven(int device, int degree);
  // The newcomers the next growth step of `plan`, proven at `degree` by a step of `k` that paid `each` per newcomer,
  // admits at once (rule 6): twice k while each paid burst_gain and there is room, else one.
  int BurstAfter(const Plan& plan, int degree, int k, double each) const;
  // The step of `device` to its degree paid: proven, the next step's burst set, and the note (`how`: "", or why early).
  void Prove(int device, int degree, int k, double gain, double each, const std::string& how);
  // The run showed its footprint and rate, over windows of `window_s` (measured, or rated): learns them; returns
  // whether it completes its device's pending growth step, every newcomer of which is then `ready`.
  bool Reading(Live& run, const Footprint& footprint, double window_s, const std::function<bool(const Live&)>& ready);
  // Whether the run counts as known for growth (rules 2, 9): measured, or rated on the CPU device.
  bool Known(const Live& run) const { return run.measured || run.rated; }
  // Rule 10: a degree's rate from its spans, the share it may be off by, and the seconds held; nullopt when held
  // under `least_s` or with too few steps to tell.
  struct SpanRate {
    double rate = 0, error = 0, seconds = 0;
  };
  std::optional<SpanRate> ReadSpan(const std::string& shape, int degree, double least_s) const;
  // Rule 10: whether the progress of `shape` at the proven degree of `device` can be read, which a trial needs: without
  // it, a degree on trial could never be decided, and the device would stay at it.
  bool ReadsProven(int device, const std::string& shape) const;
  // Rule 10 on `device`, which holds one shape: proves the highest degree its spans show paying, or shows the degree
  // on trial poor.
  void ProveFromSpans(int device);
  // The degree whose runs of `s` trained fastest together (degree x median run rate), each step up paying min_gain
  // per added run compounded, over degrees with at least two finished runs; nullopt with fewer than two degrees.
  std::optional<int> HindsightDegree(const Shape& s) const;

  std::vector<DeviceInfo> devices_;
  PackingParams params_;
  std::vector<Plan> plans_;
  std::map<std::string, std::set<std::pair<int64_t, std::string>>> waiting_;  // shape -> (index, key)
  std::map<std::string, std::string> queued_shape_;                           // key -> shape
  std::map<std::string, Live> where_;                                         // live runs by key
  std::map<std::string, Shape> shapes_;
  std::set<Mix> poor_mixes_;
  std::map<std::string, RememberedShape> remembered_;
  std::map<std::string, std::string> clocked_;  // shape -> why
  std::map<std::pair<std::string, int>, Span> spans_;  // rule 10: (shape, degree) on the CPU device
  std::vector<std::string> notes_;
};

}  // namespace sat::sweep
