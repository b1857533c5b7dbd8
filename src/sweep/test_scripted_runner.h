// A scripted AttemptRunner (sweep/attempt_runner.h) for tests of the sweep loop's rules (header only; not part of
// the library): each attempt plays a script of its own (when it announces torch or the helper, when its steps
// start and at what rate, the metric values it reports, how and when it ends, how long a stop takes) on a clock
// that moves only when the loop waits for the channel (Poll), so a sweep of minutes runs in milliseconds. It
// stands in for processes only where they add nothing to what a test checks; every path keeps an end-to-end test
// on real processes (tests/e2e/sweep_*.sh, sweep/controller_test.cc).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sweep/attempt_runner.h"

namespace sat::sweep::fixtures {

// An end of a command: its class, detail line and exit code.
inline run::RunOutcome Outcome(run::ExitClass c, std::string detail, int exit_code) {
  run::RunOutcome o;
  o.exit_class = c;
  o.detail = std::move(detail);
  o.exit_code = exit_code;
  return o;
}

// What one attempt does; times in seconds from its start.
struct AttemptScript {
  // The first sign that steps will come: a hello of the automatic instrumentation, or torch mapped in the tree.
  // None: the run is judged by its tree alone until its first step.
  std::optional<double> hello_at_s, torch_at_s;
  // Progress reports from `steps_from_s`, every `every_s`, at `rate` samples/s; none when rate is 0.
  double steps_from_s = 0.2, every_s = 0.1, rate = 0;
  // Metric values reported (a `metrics` message each, as saturate.report sends), at their times; progress reports
  // carry the latest.
  std::vector<std::pair<double, std::map<std::string, double>>> metrics;
  // The tree as each reading finds it.
  double cpu_pct = 100;
  uint64_t rss_bytes = 200ull << 20;
  // How it ends on its own: at `exit_at_s` with `outcome` (its duration filled in), or once it trained
  // `work_samples` (a fixed amount of work, which takes longer while it shares the machine); never when unset.
  std::optional<double> exit_at_s;
  std::optional<double> work_samples;
  run::RunOutcome outcome = Outcome(run::ExitClass::kFinished, "exited with code 0", 0);
  // A stop request ends it this long after, as stopped.
  double stop_takes_s = 0.05;
};

class ScriptedRunner : public AttemptRunner {
 public:
  // `script_for` gives each attempt its script from its launch (its command line tells the runs apart) and how
  // many attempts were started before it.
  explicit ScriptedRunner(std::function<AttemptScript(const Launch&, int started_before)> script_for,
                          double t0 = 1000)
      : script_for_(std::move(script_for)), now_(t0) {}

  // An attempt as the loop started it: its command and start, and its script.
  struct Started {
    Launch launch;
    double start_t = 0;
    AttemptScript script;
    std::string run_id;
    int64_t pid = 0;
    std::optional<double> stop_requested_t;
    std::optional<run::RunOutcome> ended;
    double end_t = 0;
    double trained = 0;    // samples trained up to the start of the current wait
    double rate_now = 0;   // its rate during the current wait (ScriptedRunner::speed)
    std::optional<double> work_end_t;  // when it trained work_samples
  };
  const std::vector<std::shared_ptr<Started>>& started() const { return started_; }
  double now() const { return now_; }

  double Now() override { return now_; }

  // Moves the clock by the wait (at least a millisecond, so that a loop waiting for nothing still advances) and
  // returns the reports every live attempt sent in that time.
  Result<std::vector<measure::HelperMessage>> Poll(int timeout_ms) override {
    const double from = now_;
    // Each attempt trains at its rate times the machine's speed for the attempts alive as the wait began.
    std::vector<const Started*> alive;
    for (const auto& a : started_) {
      if (!Ended(*a) && (!speed_by_training || from >= a->start_t + a->script.steps_from_s)) alive.push_back(a.get());
    }
    const int live = static_cast<int>(alive.size());
    now_ += std::max(timeout_ms, 1) / 1000.0;
    for (const auto& a : started_) {
      a->rate_now = a->script.rate * (speed_of ? speed_of(*a, alive) : speed ? speed(live) : 1.0);
      const double first = a->start_t + a->script.steps_from_s;
      if (a->script.work_samples && !a->work_end_t && a->rate_now > 0 && !a->ended) {
        const double t = std::max(from, first) + (*a->script.work_samples - a->trained) / a->rate_now;
        if (t <= now_) a->work_end_t = std::max(t, from);
      }
    }
    std::vector<measure::HelperMessage> out;
    for (const auto& a : started_) {
      const bool alive_before = !a->ended;
      Reports(*a, from, out);
      if (!alive_before) continue;
      const double first = a->start_t + a->script.steps_from_s;
      const double until = a->ended ? std::min(now_, a->end_t) : now_;
      if (until > first) a->trained += a->rate_now * (until - std::max(from, first));
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.t < y.t; });
    return out;
  }

  // The machine's speed for each attempt when `live` attempts run (1: as scripted); unset: they never slow.
  std::function<double(int live)> speed;
  // Set: each attempt's speed from the attempts alive as the wait began, in place of `speed`, for machines whose
  // runs slow unequally (a busy loop and a run that mostly sleeps sharing the cores).
  std::function<double(const Started& a, const std::vector<const Started*>& alive)> speed_of;
  // Whether `live` counts only the attempts past their start-up (training: a GPU's runs load it only once they step).
  bool speed_by_training = false;

  // 16 GiB of host memory, less what the live attempts hold; their CPU over `cores` cores.
  telemetry::Sample SampleOnce() override {
    telemetry::Sample s;
    s.mono_s = now_;
    uint64_t used = 0;
    double cpu = 0;
    for (const auto& a : started_) {
      if (Ended(*a)) continue;
      used += a->script.rss_bytes;
      cpu += a->script.cpu_pct;
    }
    if (gpu_bytes) {
      // One GPU of 80 GiB, each live attempt holding gpu_bytes of it.
      telemetry::GpuSample g;
      g.memory_total_bytes = kGpuBytes;
      uint64_t held = 0;
      for (const auto& a : started_) {
        if (Ended(*a)) continue;
        g.processes.push_back(telemetry::GpuProcess{static_cast<pid_t>(a->pid), *gpu_bytes});
        held += *gpu_bytes;
      }
      g.memory_used_bytes = held;
      g.memory_free_bytes = kGpuBytes - std::min(held, kGpuBytes);
      s.gpus.push_back(g);
    }
    s.host.cpu_count = cores;
    s.host.cpu_util_pct = std::min(100.0, cpu / cores);
    s.host.mem_total_bytes = kHostBytes;
    s.host.mem_available_bytes = kHostBytes - std::min(used, kHostBytes);
    latest_ = s;
    return s;
  }
  std::optional<telemetry::Sample> Latest() override { return latest_; }

  Result<std::unique_ptr<AttemptProcess>> Start(AttemptWatch& watch, Launch launch) override {
    auto a = std::make_shared<Started>();
    a->script = script_for_(launch, static_cast<int>(started_.size()));
    a->launch = std::move(launch);
    a->start_t = now_;
    a->run_id = watch.run_id();
    a->pid = 1000 + static_cast<int64_t>(started_.size());
    started_.push_back(a);
    return std::unique_ptr<AttemptProcess>(new Process(a, *this));
  }

  unsigned cores = 4;
  static constexpr uint64_t kHostBytes = 16ull << 30;
  // Set: the samples hold one GPU (index 0, kGpuBytes), on which each live attempt holds this much; for sweeps given a
  // GpuBackend of one device (the backend stands for NVML's device count; the samples for its readings).
  std::optional<uint64_t> gpu_bytes;
  static constexpr uint64_t kGpuBytes = 80ull << 30;

 private:
  class Process : public AttemptProcess {
   public:
    Process(std::shared_ptr<Started> a, ScriptedRunner& runner) : a_(std::move(a)), runner_(runner) {}
    bool Accept(const measure::HelperMessage& m) override { return m.run == a_->run_id; }
    std::optional<run::RunOutcome> Poll() override { return runner_.Ended(*a_); }
    void RequestStop() override {
      if (!runner_.Ended(*a_) && !a_->stop_requested_t) a_->stop_requested_t = runner_.now_;
    }
    telemetry::ProcTreeSample ReadTree(AttemptWatch& watch, const telemetry::Sample& sample, double now) override {
      if (runner_.Ended(*a_)) return {};
      telemetry::ProcTreeSample tree;
      tree.root = static_cast<pid_t>(a_->pid);
      tree.alive = true;
      tree.pids = {tree.root};
      tree.process_count = 1;
      tree.cpu_pct = a_->script.cpu_pct;
      tree.rss_bytes = a_->script.rss_bytes;
      const bool torch = a_->script.torch_at_s && now - a_->start_t >= *a_->script.torch_at_s;
      watch.OnTree(tree, sample, now, torch);
      return tree;
    }

   private:
    std::shared_ptr<Started> a_;
    ScriptedRunner& runner_;
  };

  // How the attempt ended, once the clock has passed its end (its own, or a stop's).
  std::optional<run::RunOutcome> Ended(Started& a) {
    if (a.ended) return a.ended;
    std::optional<double> own = a.script.exit_at_s ? std::optional(a.start_t + *a.script.exit_at_s) : std::nullopt;
    if (a.work_end_t && (!own || *a.work_end_t < *own)) own = a.work_end_t;
    std::optional<double> stop =
        a.stop_requested_t ? std::optional(*a.stop_requested_t + a.script.stop_takes_s) : std::nullopt;
    if (own && (!stop || *own <= *stop) && now_ >= *own) {
      a.ended = a.script.outcome;
      a.end_t = *own;
    } else if (stop && now_ >= *stop) {
      a.ended = Outcome(run::ExitClass::kStopped, "stopped on request, ended after SIGINT (exit code 130)", 130);
      a.end_t = *stop;
    }
    if (a.ended) a.ended->duration_s = a.end_t - a.start_t;
    return a.ended;
  }

  // The attempt's messages in (from, now_], while it lives.
  void Reports(Started& a, double from, std::vector<measure::HelperMessage>& out) {
    Ended(a);  // an end inside this wait bounds what was sent in it
    const double until = a.ended ? std::min(now_, a.end_t) : now_;
    auto message = [&](measure::MessageType type, double t) {
      measure::HelperMessage m;
      m.type = type;
      m.run = a.run_id;
      m.pid = a.pid;
      m.t = t;
      return m;
    };
    if (a.script.hello_at_s) {
      const double t = a.start_t + *a.script.hello_at_s;
      if (t > from && t <= until) {
        measure::HelperMessage hello = message(measure::MessageType::kHello, t);
        hello.automatic = true;
        hello.mode = "full";
        out.push_back(std::move(hello));
      }
    }
    for (const auto& [at, values] : a.script.metrics) {
      const double t = a.start_t + at;
      if (t <= from || t > until) continue;
      measure::HelperMessage m = message(measure::MessageType::kMetrics, t);
      m.metrics = values;
      out.push_back(std::move(m));
    }
    if (a.script.rate <= 0) return;
    const double first = a.start_t + a.script.steps_from_s;
    for (int64_t k = 0;; ++k) {
      const double t = first + static_cast<double>(k) * a.script.every_s;
      if (t > until) break;
      if (t <= from) continue;
      measure::HelperMessage m = message(measure::MessageType::kProgress, t);
      m.samples = a.trained + a.rate_now * (t - std::max(from, first));
      m.steps = k;
      m.step_s = t - first;
      for (const auto& [at, values] : a.script.metrics) {
        if (t - a.start_t >= at) m.metrics = values;
      }
      out.push_back(std::move(m));
    }
  }

  std::function<AttemptScript(const Launch&, int)> script_for_;
  double now_;
  std::vector<std::shared_ptr<Started>> started_;
  std::optional<telemetry::Sample> latest_;
};

}  // namespace sat::sweep::fixtures
