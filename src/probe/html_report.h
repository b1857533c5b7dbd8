// report.html of `saturate probe` (written with --out, beside probe.json): the same result as the console report,
// drawn (report/page.h's look, nothing fetched):
//   - at the top the verdict, the next knob and the command to run next, in a block to copy;
//   - the pipeline as pipes as wide as their measured rates (ProbePipeline), the narrowest marked with its evidence;
//   - each stage's throughput over time, the warm-up and the steady window shaded, the estimate as a line;
//   - the full stage's step time as one bar: data wait, the model, after-step work and other named phases;
//   - the probed GPU's utilisation, memory and power over each stage (only where there is a GPU);
//   - for a distributed job one row per rank, the straggler marked;
//   - the what-if estimates, the energy and the cost as small tables; then the stages' numbers and the notes.
// Pure formatting over a ProbeResult, like probe/report.h.
#pragma once

#include <string>

#include "probe/probe_result.h"
#include "report/pipes.h"

namespace sat::probe {

// The pipes, in the order data flows, in samples/s:
//   storage         measured when the loader stage read from a local disk: its samples/s x 100 / the disk's busy
//                   share (what the disk would supply if always busy); not measured when the files came from the
//                   page cache (under 1 KiB read per sample: "not limiting"), a network filesystem, or the sampler
//                   saw no disk;
//   loader          the loader stage;
//   host-to-device  measured on a GPU in the peak table whose PCIe receive counter moved in the full stage: the host
//                   link's bandwidth / the bytes per sample it received (as what_if.h's copy pipe);
//   compute         the compute stage;
//   full training   the full stage: what the pipes above let through.
// The narrowest is the verdict's bottleneck (loader, or storage when the verdict blames the storage; compute;
// host-to-device for transfer; full training for step overhead and a straggler, whose time is the loop's own);
// none for a failed or unknown verdict.
report::Pipeline ProbePipeline(const ProbeResult& result);

// The next command: `saturate tune -- CMD` when a knob is to be turned, `saturate probe --budget ... -- CMD` to
// measure again when the verdict is unknown; the command with secrets hidden (util/redact.h).
std::string NextCommand(const ProbeResult& result);

// The whole page.
std::string ProbeHtml(const ProbeResult& result);

}  // namespace sat::probe
