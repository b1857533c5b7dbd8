// `saturate tune --trace`: one more full-training run of the recommended configuration, for a torch.profiler
// Chrome trace of a few of its steady steps and the trace's summary (core/trace_summary.h).
#pragma once

#include <string>

#include "core/stage.h"
#include "core/trace_summary.h"
#include "tune/search.h"

namespace sat::tune {

// The longest the trace run may take: start-up, the first step, and the profiler's 6 steps after it.
inline constexpr double kTraceRunCapS = 90;

// Runs the command with `search.recommended` (the script's own settings when there is none but a baseline ran)
// in full-training mode with SATURATE_TRACE=`path`, from `base` (the trials' stage options; `auto_target` the
// training DataLoader the trials found), and stops it once the helper reports the trace written. Never an error:
// the outcome says why there is no trace (interrupted, nothing to trace, the run did not get that far).
// `stages` runs it (tune's runner); `log_dir` holds the run's stdout.log and stderr.log.
core::TraceOutcome TraceRecommendation(const core::StageOptions& base, const std::vector<std::string>& argv,
                                        const SearchOutcome& search, const std::string& path,
                                        const std::string& auto_target, core::StageRunner& stages,
                                        const std::string& log_dir);

}  // namespace sat::tune
