#include "probe/session.h"

#include "monitor/live_figures.h"
#include "util/strings.h"

namespace sat::probe {

Result<Session> StartSession(const SessionSpec& spec) {
  // Every sample goes to the live page too, under the command being measured.
  std::function<void(const telemetry::Sample&)> publish;
  if (spec.live) {
    spec.live->SetTreeCommand(JoinNonEmpty(spec.argv, " "));
    publish = [live = spec.live](const telemetry::Sample& s) { live->SetSample(s); };
  }
  auto sampling = StartStageSampler(spec.gpu, spec.device, spec.span_s, spec.proc_root, std::move(publish));
  if (!sampling) return sampling.error();
  Session session;
  session.machine = DescribeMachine(sampling->first, sampling->gpu_index);
  session.base = StageOptionsOn(*sampling, spec.device);
  session.sampling = std::move(*sampling);
  StageOptions& base = session.base;
  base.argv = spec.argv;
  base.shell = spec.shell;
  base.parse = spec.parse;
  base.auto_instrument = spec.auto_instrument && !spec.parse;
  base.samples_per_step = spec.samples_per_step;
  base.verbose = spec.verbose;
  base.estimator.target_rel_half_width = spec.target_rel_half_width;
  base.live = spec.live;
  base.live_labels = {{"command", spec.command_name}};
  return session;
}

}  // namespace sat::probe
