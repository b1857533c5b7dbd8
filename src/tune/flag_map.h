// Which of the script's own options sets a knob that saturate would otherwise inject: candidates found in the
// baseline, each proven by a trial before the recommendation uses it (search.cc, step "flags").
//
// A candidate: the automatic instrumentation reported the training DataLoader's (or autocast's) value of an
// injected knob, and exactly one option the script parsed carries that same value under a name that fits the
// knob's role ("--batch-size", "--bs", "-b" for batch_size; "--workers", "-j", "--num-workers" for workers;
// "--pin-memory"; "--amp", "--precision", "--mixed-precision"). The proof: a run with the flag changed to
// another value (ProofValue) and nothing injected, whose loader must then report that value. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/helper_message.h"
#include "tune/flag.h"
#include "tune/knob.h"
#include "tune/trial.h"

namespace sat::tune {

// The role an option's name fits ("--num-workers" and "-j": workers), by any of its spellings or its dest;
// KnobRole::kOther when none fits.
KnobRole OptionRole(const measure::FlagOption& option);

struct FlagCandidate {
  std::string knob;     // the knob's name
  FlagBinding flag;     // the option, with the script's value
  KnobValue proof;      // the value the proving run gives the flag
};

// The candidates among `knobs` (injected ones with a script value) in `options`. A knob whose value more than
// one fitting option carries gets none, and `notes` (when given) says so.
std::vector<FlagCandidate> FindCandidates(const std::vector<KnobState>& knobs,
                                          const std::vector<measure::FlagOption>& options,
                                          std::vector<std::string>* notes);

// Another value of the knob than the script's, for the proving run: workers one more (one fewer at the top of
// the range), a batch half as large (twice, at the bottom), the next choice. nullopt when the knob has no other.
std::optional<KnobValue> ProofValue(const KnobSpec& spec, const KnobValue& script_value);

// What the proving trial `t` showed for one candidate: empty when the DataLoader (or autocast) followed the flag,
// else why not ("the DataLoader kept num_workers=0", "the run failed: ...").
std::string Unproven(const FlagCandidate& c, const Trial& t);

}  // namespace sat::tune
