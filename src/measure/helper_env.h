// The environment contract between saturate and the Python side it puts on a training command's PYTHONPATH
// (docs/helper-protocol.md, "Environment"). Every variable saturate sets for the helper is set here and nowhere
// else, so probe's stages, tune's trials and pasted commands, sweep's runs (here and on Slurm nodes) and
// `monitor -- CMD` cannot drift apart.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "run/runner.h"

namespace sat::measure {

// What one instrumented command is told. Unset fields add nothing, so the command's own environment (or the
// helper's default) stands.
struct HelperEnv {
  std::string channel_path;                 // SATURATE_CHANNEL: the datagram socket the helper reports on
  std::string run_id;                       // SATURATE_RUN_ID: tells this command's reports apart on the channel
  std::optional<bool> auto_instrument;      // SATURATE_AUTO "1"/"0": the automatic instrumentation on or off
  std::optional<double> report_interval_s;  // SATURATE_REPORT_INTERVAL: seconds between progress reports
  std::string mode;                         // SATURATE_MODE: "train", "loader" or "compute" (probe's stages)
  std::string auto_target;                  // SATURATE_AUTO_TARGET: the training DataLoader's key, from a run before
  std::optional<double> samples_per_step;   // SATURATE_SAMPLES_PER_STEP: when nothing else says it
  std::string trace_path;                   // SATURATE_TRACE: where the profiler trace of a few steps goes
};

// Puts `h` into `spec`: its variables over spec.env, PYTHONUNBUFFERED=1 (printed lines arrive when printed, for
// patterns and the user's eyes), and the Python side's folder (run::HelperPythonDir) in front of PYTHONPATH.
void ApplyHelperEnv(const HelperEnv& h, run::RunSpec& spec);

// SATURATE_KNOBS: the knob values (a JSON object's text) the helper applies in `env`; tune's trials and a
// recommendation that needs the helper carry it.
inline constexpr const char* kKnobsVar = "SATURATE_KNOBS";
void SetHelperKnobs(std::map<std::string, std::string>& env, std::string knobs_json);

}  // namespace sat::measure
