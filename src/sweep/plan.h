// A sweep's plan: how many runs a spec makes, their parameter values (grid, random, or placeholders for bayes),
// the hash a resume checks, each run's command line, and the packing shape of a run. Pure functions of the spec (and a seed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

// How many runs ExpandRuns plans: the grid's size or the random run count, capped by run_cap and
// saturate.runs.
Result<int64_t> RunCount(const Spec& spec);

// The plan: GridRuns or RandomRuns (params.h) over the parameters in name order; for bayes, RunCount runs
// with null values (proposed as they start) and keys from the seed and index. `seed` is ignored by grid
// search. Errors only for a Spec that did not come from the parsers above and breaks their rules.
Result<std::vector<RunParams>> ExpandRuns(const Spec& spec, uint64_t seed);

// A hash (16 hex digits) of everything that decides which runs there are and what they execute: method,
// parameters, run count, the seed for random search, program and command. A resumed sweep must have the same
// hash; the saturate section's scheduling settings (GPUs, timeout, retries, env, ...) may change between
// sessions.
std::string SpecHash(const Spec& spec, uint64_t seed);

// The argv of one run. The first overload uses CommandContext::FromSystem() (looked up once per process).
std::vector<std::string> RenderCommand(const Spec& spec, const RunParams& run);
std::vector<std::string> RenderCommand(const Spec& spec, const RunParams& run, const CommandContext& context);

// The packing shape of a run: "" when spec.saturate.shape is empty, else "name=value,..." over those
// parameters (values as the command line gets them).
std::string ShapeOf(const Spec& spec, const nlohmann::json& params);

// Usage error when a spec.saturate.shape entry names no parameter (with a "did you mean").
Status CheckShape(const Spec& spec);

}  // namespace sat::sweep
