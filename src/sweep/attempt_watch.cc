#include "sweep/attempt_watch.h"

#include <unistd.h>

#include <utility>

namespace sat::sweep {

AttemptWatch::AttemptWatch(std::string run_id, double start_t, bool on_gpu, const MeterOptions& options,
                           bool auto_instrumentation)
    : run_id_(std::move(run_id)),
      auto_instrumentation_(auto_instrumentation),
      window_s_(options.window_s),
      meter_(start_t, on_gpu, options, run_id_),
      ticks_per_s_(sysconf(_SC_CLK_TCK)) {}

Result<std::unique_ptr<measure::InstrumentedRun>> AttemptWatch::Start(Launch launch, measure::HelperChannel* shared) {
  launch.auto_instrumentation = auto_instrumentation_;
  launch.window_s = window_s_;
  launch.lines = lines_;
  return measure::InstrumentedRun::Start(LaunchSpec(launch), run_id_, shared);
}

std::vector<MetricPoint> AttemptWatch::OnMessage(const measure::HelperMessage& m) {
  if (m.run != run_id_) return {};
  meter_.Add(m);
  return helper_.Add(m, NowUnix());
}

telemetry::ProcTreeSample AttemptWatch::ReadTree(measure::InstrumentedRun& run, const telemetry::Sample& sample,
                                                 double now) {
  const pid_t pid = run.pid();
  if (pid <= 0) return {};
  telemetry::TreeCounters cur = tree_reader_.Read(pid);
  telemetry::ProcTreeSample tree =
      telemetry::ComputeTreeSample(prev_tree_ ? &*prev_tree_ : nullptr, cur, now - prev_tree_t_, ticks_per_s_);
  if (WantsTorchSign()) run.LookForTorch(tree.pids);
  OnTree(tree, sample, now, run.signs().torch_loaded == true);
  prev_tree_ = std::move(cur);
  prev_tree_t_ = now;
  return tree;
}

void AttemptWatch::OnTree(const telemetry::ProcTreeSample& tree, const telemetry::Sample& sample, double now,
                          bool torch_loaded) {
  meter_.AddTree(TreeReading{now, tree.cpu_pct, tree.rss_bytes, telemetry::TreeGpuMemory(tree.pids, sample.gpus),
                             tree.blocked_count, tree.worker_count});
  // A run that loaded torch will report its steps through the automatic layer, which says nothing before the
  // first one: until then the run is starting up, not measurable.
  if (torch_loaded && WantsTorchSign()) meter_.Announce();
}

std::vector<MetricPoint> AttemptWatch::Missing(const MetricLog& log) const { return helper_.Missing(log, NowUnix()); }

}  // namespace sat::sweep
