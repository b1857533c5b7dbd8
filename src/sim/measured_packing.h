// saturate's packing policy as a Scheduler (Policy::kMeasured in sim/policy.h):
//   1. a GPU with no run takes the earliest waiting run: alone, a run is never at risk, and it is measured;
//   2. a GPU grows only when every run on it has been measured (one newcomer at a time, so each newcomer's
//      memory is seen before the next: no task-spooler race);
//   3. the newcomer must be of a measured shape, and (measured memory of the runs there + the shape's largest
//      measured memory) × (1 + margin) must fit, and the node's launched runs plus the newcomer must want at
//      most cpu_limit × its cores;
//   4. once the newcomer is measured, the GPU's progress rate is compared with the rate just before the
//      admission (inconclusive if a run left meanwhile). A gain under min_gain marks the GPU's mix of shapes
//      (the multiset: {a, a, a}, or {a, b}) as poor, and no GPU grows into a mix containing a poor one:
//      a poor {a, a, a} holds shape a at degree 2 everywhere, and the GPU that found it takes no newcomer
//      until a run leaves it;
//   5. an OOM lowers the GPU's degree to the runs still there, until it empties; the run is queued again.
// Waiting runs are taken in submission order, except that a run that does not fit a growing GPU lets later
// ones that do go first. A waiting run whose shape was never measured holds back all growth until it gets an
// empty GPU or its shape is measured, so GPUs drain and it is not starved. A run that ends before its warm-up
// counts as measured at its end.
#pragma once

#include <climits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/policy.h"

namespace sat::sim {

class MeasuredPacking final : public Scheduler {
 public:
  // `params` must have passed ValidateParams.
  MeasuredPacking(const Cluster& cluster, const PolicyParams& params);

  bool WantsMeasurements() const override { return true; }
  void OnReady(Cluster& cluster, int run) override;
  void OnMeasured(Cluster& cluster, int run) override;
  void OnOom(Cluster& cluster, int run, int gpu) override;
  void OnFinished(Cluster& cluster, int run, int gpu) override;
  void Dispatch(Cluster& cluster) override;

  // Shape name -> degree held by GPUs holding only that shape (one less than its smallest poor mix).
  std::map<std::string, int> HeldDegrees(const Cluster& cluster) const;

 private:
  using Mix = std::vector<int>;  // shapes of the runs on a GPU, sorted
  struct Shape {
    bool measured = false;
    double mem_gib = 0;    // largest measured steady memory
    double cpu_cores = 0;  // largest measured cores
    std::set<int> waiting;
  };
  // The admission under test on a GPU: its newcomer and the GPU's rate just before.
  struct Probe {
    int newcomer = -1;
    double rate_before = 0;
    long departures = 0;
  };
  struct GpuPlan {
    int unmeasured = 0;       // runs launched there and not yet measured
    double measured_mem = 0;  // sum of the measured memory of the others
    int cap = INT_MAX;        // degree limit from an OOM on this GPU
    long departures = 0;      // runs that left since the GPU was last empty
    Probe probe;
  };

  void Start(Cluster& cluster, int run, int gpu);
  void Learn(const Cluster& cluster, int run);
  void Evaluate(const Cluster& cluster, int gpu);
  // A run left `gpu`: drop the probe it was, reset an emptied GPU, and recheck the node's GPUs.
  void AfterLeave(const Cluster& cluster, int run, int gpu);
  // The earliest waiting run that may join `gpu` now; -1 if none.
  int PickNewcomer(const Cluster& cluster, int gpu) const;
  // Whether `mix` contains a poor mix: one that includes `shape`, or any when `shape` is -1.
  bool HasPoorMix(const Mix& mix, int shape) const;

  PolicyParams params_;
  std::vector<Shape> shapes_;
  std::vector<GpuPlan> gpus_;
  std::vector<char> measured_;      // per run, for its current attempt
  std::set<int> waiting_;           // all waiting runs, by submission order
  std::set<int> measured_waiting_;  // measured shapes with waiting runs
  std::set<int> empty_;             // GPUs with no run
  std::set<int> dirty_;             // GPUs to consider for growth
  std::set<int> idle_;              // GPUs that could grow but nothing waiting fits them
  std::set<Mix> poor_mixes_;
  std::vector<std::vector<Mix>> poor_mixes_with_;  // per shape: the poor mixes that include it
};

}  // namespace sat::sim
