// The code change that keeps an injected recommendation without saturate. Knobs the script has no flag for are set
// by saturate's automatic instrumentation (on the training DataLoader, or as torch.autocast around the model's
// forward), which works only when saturate runs the script; people need the edit to make instead. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "tune/search.h"

namespace sat::tune {

// One edit, e.g. {"DataLoader at train.py:57", "DataLoader(..., num_workers=4, pin_memory=True)"}.
struct CodeChange {
  std::vector<std::string> knobs;  // the injected knobs it carries
  // "DataLoader at train.py:57", "the training DataLoader", "around the model's forward"
  std::string where;
  std::string code;                // what to write there
  std::string Text() const;        // "DataLoader at train.py:57: DataLoader(..., num_workers=4, pin_memory=True)"
};

// The edits for the recommendation `values`: one DataLoader call with every injected loader knob whose value
// differs from the script's own (argument names as torch.utils.data.DataLoader spells them, on/off as
// True/False), and for amp `with torch.autocast("cuda", dtype=torch.bfloat16):` around the model's forward
// ("cpu" without a GPU; float16 for fp16). Empty when no injected knob changes.
std::vector<CodeChange> CodeChanges(const SearchOutcome& search, const KnobValues& values, bool gpu);

// For each knob delivered by the script's own option (Delivery::kFlag), a line for the report: "batch_size:
// --batch-size (trial 2 ran with --batch-size 32 and the training DataLoader had batch_size=32)".
std::vector<std::string> FlagSources(const SearchOutcome& search);

// The DataLoader argument an injected knob sets ("num_workers" for the workers role), empty when it is not one.
std::string LoaderArgument(const KnobSpec& spec);

}  // namespace sat::tune
