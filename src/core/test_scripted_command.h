// A scripted StageCommand (stage_command.h) for tests of the stage rules (header only; not part of the library):
// helper messages, parsed output lines, samples and an exit, each at a time on a clock of its own that moves only
// when the stage waits (Drain), so a 40 s stage runs in milliseconds. It stands in for a process only where the
// process adds nothing to what a test checks; every path keeps an end-to-end test on a real script.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/stage_command.h"

namespace sat::core::fixtures {

class ScriptedCommand : public StageCommand {
 public:
  // The clock starts at `t0`.
  explicit ScriptedCommand(double t0 = 1000) : now_(t0), t0_(t0) {}

  // The helper sends `m` at `t` (seconds after the start); m.t is set to the clock's time then.
  ScriptedCommand& Message(double t, measure::HelperMessage m) {
    m.t = t0_ + t;
    events_.push_back({t0_ + t, std::move(m), std::nullopt});
    return *this;
  }
  // An output line parsed at `t`; its observation's end is stamped with the clock's time.
  ScriptedCommand& Line(double t, measure::ParsedLine line) {
    line.observation.t_end_s = t0_ + t;
    events_.push_back({t0_ + t, std::nullopt, std::move(line)});
    return *this;
  }
  // Progress reports of one trainer (`pid`, run `run`) every `every_s` from `from_s` to `to_s`, at `rate`
  // samples/s in steps of `batch` samples, waiting `wait_share` of each interval for data.
  ScriptedCommand& Steady(double from_s, double to_s, double every_s, double rate, double batch = 32,
                          int64_t pid = 100, std::string run = "run", double wait_share = 0) {
    double samples = 0;
    int64_t steps = 0;
    double wait = 0, step = 0;
    for (double t = from_s; t <= to_s + 1e-9; t += every_s) {
      measure::HelperMessage m;
      m.type = measure::MessageType::kProgress;
      m.run = run;
      m.pid = pid;
      m.steps = steps;
      m.samples = samples;
      m.wait_s = wait;
      m.step_s = step;
      Message(t, std::move(m));
      samples += rate * every_s;
      steps += static_cast<int64_t>(std::llround(rate * every_s / batch));
      wait += every_s * wait_share;
      step += every_s * (1 - wait_share);
    }
    return *this;
  }
  // The command ends on its own at `t` with `outcome`.
  ScriptedCommand& Exit(double t, run::RunOutcome outcome) {
    exit_t_ = t0_ + t;
    exit_ = std::move(outcome);
    return *this;
  }
  // How long the command takes to stop once asked: what it sends in that time still arrives.
  ScriptedCommand& ShutdownTakes(double s) {
    shutdown_s_ = s;
    return *this;
  }
  // Files the tree has open at every scan, and what the helper's signs say.
  ScriptedCommand& OpenFiles(std::vector<std::string> files) {
    open_files_ = std::move(files);
    return *this;
  }
  ScriptedCommand& Samples(std::vector<telemetry::Sample> samples) {
    samples_ = std::move(samples);
    return *this;
  }

  // When the stage asked the command to stop (the clock's time), and the trainers it named last.
  std::optional<double> stopped_at() const { return stopped_at_; }
  const std::vector<pid_t>& trainers() const { return trainers_; }
  int scans() const { return scans_; }

  double Now() override { return now_; }

  void Drain(int timeout_ms, const std::function<void(const measure::HelperMessage&)>& on_message) override {
    // The clock moves to the next event within the wait, or by the whole wait.
    double until = now_ + timeout_ms / 1000.0;
    if (!stopped_at_ && exit_t_ && *exit_t_ < until) until = std::max(now_, *exit_t_);
    Deliver(until, on_message);
    now_ = std::max(now_, until);
  }

  std::vector<measure::ParsedLine> TakeParsedLines() override { return std::exchange(lines_, {}); }

  std::optional<run::RunOutcome> Poll() override {
    if (exit_t_ && now_ >= *exit_t_) return exit_;
    return std::nullopt;
  }

  run::RunOutcome StopAndWait() override {
    if (auto ended = Poll()) return *ended;
    stopped_at_ = now_;
    run::RunOutcome o;
    o.exit_class = run::ExitClass::kStopped;
    o.detail = "stopped by saturate";
    o.term_signal = 2;
    o.duration_s = now_ - t0_;
    return o;
  }

  std::vector<std::string> ScanOpenFiles(bool want_files) override {
    ++scans_;
    return want_files ? open_files_ : std::vector<std::string>{};
  }
  void SetTrainers(std::vector<pid_t> pids) override { trainers_ = std::move(pids); }
  std::vector<telemetry::Sample> SamplesSince(double t0) override {
    std::vector<telemetry::Sample> out;
    for (const auto& s : samples_) {
      if (s.mono_s >= t0) out.push_back(s);
    }
    return out;
  }
  measure::RunSigns signs() const override { return signs_; }
  std::string auto_failure() const override { return ""; }

 private:
  struct Event {
    double t;
    std::optional<measure::HelperMessage> message;
    std::optional<measure::ParsedLine> line;
  };

  // Hands on every event up to `until`, oldest first; once the command was stopped, those of its shutdown too
  // (up to shutdown_s after the stop: the helper's last report covers time after saturate asked it to stop).
  void Deliver(double until, const std::function<void(const measure::HelperMessage&)>& on_message) {
    std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
    if (stopped_at_) until = std::max(until, *stopped_at_ + shutdown_s_);
    size_t i = 0;
    for (; i < events_.size(); ++i) {
      Event& e = events_[i];
      if (e.t > until + 1e-12) break;
      if (e.message) {
        signs_.helper_seen = true;
        if (e.message->type == measure::MessageType::kHello && e.message->automatic) signs_.auto_seen = true;
        on_message(*e.message);
      }
      if (e.line) lines_.push_back(std::move(*e.line));
    }
    events_.erase(events_.begin(), events_.begin() + static_cast<long>(i));
  }

  double now_, t0_;
  double shutdown_s_ = 0.5;
  std::vector<Event> events_;
  std::vector<measure::ParsedLine> lines_;
  std::optional<double> exit_t_;
  run::RunOutcome exit_;
  std::vector<std::string> open_files_;
  std::vector<telemetry::Sample> samples_;
  std::optional<double> stopped_at_;
  std::vector<pid_t> trainers_;
  measure::RunSigns signs_;
  int scans_ = 0;
};

}  // namespace sat::core::fixtures
