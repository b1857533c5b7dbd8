// How a trial's knob values become a run of the training command, and the command line people paste.
// Pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/knob.h"

namespace sat::tune {

struct RenderedRun {
  std::vector<std::string> argv;             // placeholders replaced
  std::map<std::string, std::string> env;    // SATURATE_KNOBS, PYTORCH_CUDA_ALLOC_CONF
  // The batch-size knob's value in this run, when the run sets it (a placeholder always does; a helper or
  // injected knob when `values` has it): a --parse pattern's samples per step.
  std::optional<int64_t> batch_size;
};

// Fills the command for `values`: each placeholder knob's `{name}` becomes its value (its Start() when `values`
// lacks it); a knob in `flags`, or delivered by its flag (Delivery::kFlag), present in `values` is written into
// the command as the script's own option (SetFlag); the other helper and injected knobs present in `values` go
// into SATURATE_KNOBS as one JSON object (absent when there are none, so the script runs on its own defaults);
// the allocator knob "on" sets PYTORCH_CUDA_ALLOC_CONF.
RenderedRun RenderRun(const std::vector<std::string>& argv, const std::vector<KnobSpec>& knobs,
                      const KnobValues& values, const std::map<std::string, FlagBinding>& flags = {});

// A command line to paste into a shell that runs the command with `values` outside saturate: the environment
// assignments first (with PYTHONPATH=`python_dir` when helper knobs are set, so `import saturate` finds the
// helper), then the filled command, each word quoted, flag knobs as the script's own options. With `shell`, the
// filled text runs under `sh -c`. Injected knobs are left out: they take effect only under saturate (the code
// change says how to keep them).
std::string PasteableCommand(const std::vector<std::string>& argv, bool shell, const std::vector<KnobSpec>& knobs,
                             const KnobValues& values, const std::string& python_dir);

}  // namespace sat::tune
