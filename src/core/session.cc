#include "core/session.h"

#include "live/live_figures.h"
#include "util/strings.h"

namespace sat::core {

Result<Session> StartSession(const SessionSpec& spec) {
  const SessionOptions& o = spec.options;
  // Every sample goes to the live page too, under the command being measured.
  std::function<void(const telemetry::Sample&)> publish;
  if (o.live) {
    o.live->SetTreeCommand(JoinNonEmpty(o.argv, " "));
    publish = [live = o.live](const telemetry::Sample& s) { live->SetSample(s); };
  }
  auto sampling = StartStageSampler(spec.gpu, o.gpu_index, spec.span_s, o.proc_root, std::move(publish));
  if (!sampling) return sampling.error();
  Session session;
  session.machine = DescribeMachine(sampling->first, sampling->gpu_index);
  session.base = StageOptionsOn(*sampling, o.gpu_index);
  session.sampling = std::move(*sampling);
  StageOptions& base = session.base;
  base.argv = o.argv;
  base.shell = o.shell;
  base.parse = o.parse;
  base.auto_instrument = o.auto_instrument && !o.parse;
  base.batch_size = o.batch_size;
  base.samples_per_step = o.samples_per_step;
  base.verbose = o.verbose;
  base.estimator.target_rel_half_width = o.target_rel_half_width;
  base.live = o.live;
  base.live_labels = {{"command", spec.command_name}};
  return session;
}

}  // namespace sat::core
