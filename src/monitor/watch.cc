#include "monitor/watch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "measure/instrumented_run.h"
#include "monitor/training.h"
#include "run/interrupt.h"
#include "telemetry/sampler.h"

namespace sat::monitor {

Result<WatchEnd> Watch(const WatchOptions& o, Presenter* presenter, std::ostream& out, live::LiveFigures* figures) {
  telemetry::SamplerOptions so;
  so.interval_s = o.interval_s;
  so.capacity = 16;
  so.roots = {o.proc_root, o.sys_root};
  so.gpu = o.gpu;
  so.gpu_indices = o.gpu_indices;
  auto sampler = telemetry::Sampler::Create(so);
  if (!sampler) return sampler.error();

  run::InstallInterruptHandlers();
  std::optional<TrainingFeed> training;
  run::Run* child = nullptr;  // the started command, owned by `training`
  if (!o.command.empty()) {
    // The command reports its training over the helper channel: PyTorch programs through the automatic
    // instrumentation that saturate's python/ folder loads, others through `import saturate`.
    measure::InstrumentedLaunch launch;
    launch.spec.argv = o.command;
    launch.spec.echo = true;
    // A few reports per sampling interval, so each interval has its own rate.
    launch.helper.report_interval_s = std::clamp(o.interval_s / 4, 0.02, 0.1);
    if (o.no_auto) launch.helper.auto_instrument = false;
    auto r = measure::InstrumentedRun::Start(std::move(launch), fmt::format("monitor-{}", getpid()));
    if (!r) return r.error();
    training.emplace(std::move(*r));
    child = &training->run().process();
    if (auto done = child->Poll(); done && done->exit_class == run::ExitClass::kStartFailed)
      return Error{done->detail};
    (*sampler)->Watch(child->pid());
  } else if (o.pid > 0) {
    (*sampler)->Watch(static_cast<pid_t>(o.pid));
  }

  using Clock = std::chrono::steady_clock;
  // Waits up to `seconds`, reading the helper channel meanwhile (its queue is short).
  auto wait = [&](double seconds) -> Status {
    if (!training) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      return Status::Ok();
    }
    return training->Drain(static_cast<int>(std::ceil(seconds * 1000)));
  };
  // One sample, with the training rates of the interval it closes.
  auto sample = [&]() -> Result<telemetry::Sample> {
    telemetry::Sample s = (*sampler)->SampleOnce();
    if (training) {
      if (auto status = training->Annotate(s); !status) return status.error();
    }
    if (figures) figures->SetSample(s);
    return s;
  };

  // A priming sample gives the first printed sample its rates (CPU, disk, network need two readings).
  if (auto primed = sample(); !primed) return primed.error();
  if (auto status = wait(std::min(o.interval_s, 0.2)); !status) return status.error();

  if (presenter) presenter->Begin(out);
  auto start = Clock::now();
  for (long k = 0;; ++k) {
    auto s = sample();
    if (!s) return s.error();
    if (presenter) presenter->Write(out, *s);
    out.flush();
    if (o.count > 0 && k + 1 >= o.count) break;
    if (o.pid > 0 && s->tree && !s->tree->alive) break;
    if (child && child->Poll()) break;
    // Wait for the next slot of a fixed schedule, waking early for an interrupt or the child's end.
    auto next = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((k + 1) * o.interval_s));
    while (Clock::now() < next && !run::Interrupted() && !(child && child->Poll())) {
      const double left_s = std::chrono::duration<double>(next - Clock::now()).count();
      if (auto status = wait(std::clamp(left_s, 0.0, 0.02)); !status) return status.error();
    }
    if (run::Interrupted()) break;
    if (child && child->Poll()) {
      // One last sample shows the tree as it ended, with the command's last reports.
      auto last = sample();
      if (!last) return last.error();
      if (presenter) presenter->Write(out, *last);
      break;
    }
  }
  WatchEnd end;
  if (child) {
    child->RequestStop();
    end.outcome = child->Wait();
  }
  end.interrupted = run::Interrupted();
  return end;
}

}  // namespace sat::monitor
