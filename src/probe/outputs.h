// The files a probe leaves in --out beside its stages' logs: probe.json (report.h ProbeJson, what --json prints)
// and report.html (html_report.h ProbeHtml). Written by the caller of RunProbe from the result it returned:
// measuring does not draw.
#pragma once

#include <string>

#include "probe/probe_result.h"
#include "util/result.h"

namespace sat::probe {

// Writes probe.json and report.html into `dir` (created), each whole (util/atomic_file.h); the first error stops.
Status WriteProbeOutputs(const ProbeResult& result, const std::string& dir);

}  // namespace sat::probe
