// The processes of a sweep's attempts left behind by a controller that died: a resume stops them
// (run/leftovers.h) before it starts those runs again, since they keep GPU memory and would share the device with
// the run's next attempt. They carry the attempt's run id, "<controller pid>-<run key>-<attempt number>"
// (sweep/launch.h).
#pragma once

#include <string>

#include "run/leftovers.h"
#include "sweep/records.h"

namespace sat::sweep {

// The SATURATE_RUN_ID entry ("SATURATE_RUN_ID=...") the processes of `attempt` carry.
std::string RunIdEntry(const AttemptRecord& attempt);

}  // namespace sat::sweep
