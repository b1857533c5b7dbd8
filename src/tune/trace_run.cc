#include "tune/trace_run.h"

#include "run/interrupt.h"
#include "tune/command.h"

namespace sat::tune {

core::TraceOutcome TraceRecommendation(const core::StageOptions& base, const std::vector<std::string>& argv,
                                        const SearchOutcome& search, const std::string& path,
                                        const std::string& auto_target, core::StageRunner& stages,
                                        const std::string& log_dir) {
  core::TraceOutcome none;
  none.path = path;
  if (run::Interrupted()) {
    none.error = "interrupted before the trace run";
    return none;
  }
  if (search.failed || search.trials.empty()) {
    none.error = "nothing to trace: no configuration ran";
    return none;
  }
  if (!search.helper && !search.trials.front().helper_seen) {
    none.error = "the script does not report through saturate's helper, which writes the trace";
    return none;
  }
  // The knobs as the search left them (injected ones go into SATURATE_KNOBS, like the trials').
  std::vector<KnobSpec> knobs;
  for (const KnobState& k : search.knobs) knobs.push_back(k.spec);
  RenderedRun rendered = RenderRun(argv, knobs, search.recommended);

  core::StageOptions stage = base;
  stage.argv = rendered.argv;
  for (const auto& [k, v] : rendered.env) stage.env[k] = v;
  stage.auto_target = auto_target;
  stage.trace_path = path;
  stage.stop_after_trace = true;
  stage.budget_s = kTraceRunCapS;
  stage.log_dir = log_dir;
  auto ran = stages.Run(core::StageKind::kFull, stage);
  if (!ran) {
    none.error = ran.error().message;
    return none;
  }
  return core::CollectTrace(path, ran->trace);
}

}  // namespace sat::tune
