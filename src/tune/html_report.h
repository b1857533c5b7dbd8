// report.html: one self-contained page (report/page.h: inline CSS and SVG, nothing fetched) with the tune's
// recommendation, its reasons, the trial table and the charts people look at:
//   - loader throughput against workers, with the compute ceiling as a line;
//   - throughput against batch size, with the memory used at peak (and failures marked);
//   - throughput over time for each trial, the warm-up cut shaded;
//   - GPU utilisation beside throughput per trial (the process tree's CPU use when there is no GPU).
#pragma once

#include <string>

#include "tune/tune.h"

namespace sat::tune {

std::string HtmlReport(const TuneResult& result);

}  // namespace sat::tune
