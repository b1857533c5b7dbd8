// One measurement session: what probe's stages and tune's trials share. One sampler (each stage or trial watches
// its own process tree on it), the machine they measure on, the live figures of --serve, and the options every
// stage or trial starts from, filled from the measurement flags the two commands share (cli/measurement_flags.h).
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/machine.h"
#include "core/stage.h"
#include "util/result.h"

namespace sat::core {

// How a command is measured, whichever command measures it: probe's and tune's options embed one
// (ProbeOptions::session, TuneOptions::session), filled from the measurement flags the two share
// (cli/measurement_flags.h); one type per option.
struct SessionOptions {
  std::vector<std::string> argv;           // the command as given (tune renders it per trial)
  bool shell = false;                      // --shell: argv[0] is a shell command line
  int gpu_index = -1;                      // --device (NVML index); -1: the first GPU when there is one
  std::optional<std::string> parse;        // --parse: the pattern is the only source of throughput
  std::optional<double> batch_size;        // --batch-size: samples per step for a --parse pattern that gives steps
  bool auto_instrument = true;             // false: --no-auto; --parse turns it off too
  std::optional<double> samples_per_step;  // --samples-per-step
  bool verbose = false;                    // -v: echo the command's output
  double target_rel_half_width = 0.02;     // --target: a measurement stops once its 95% interval is this tight
  std::string proc_root = "/proc";
  // --serve: every sample and each stage's or trial's progress go there; not owned, may be null.
  live::LiveFigures* live = nullptr;
};

// A session: its options, the GPU backend (not owned, may be null; must outlive the session), the live figures'
// `command` label ("probe", "tune") and the seconds of samples the sampler keeps.
struct SessionSpec {
  SessionOptions options;
  telemetry::GpuBackend* gpu = nullptr;
  std::string command_name;
  double span_s = 0;
};

struct Session {
  StageSampler sampling;  // running
  Machine machine;        // as the sampler's first sample saw it
  // argv, shell, the GPU's environment (StageOptionsOn), parse, auto_instrument, samples_per_step, verbose, the
  // estimator's target and the live figures labelled {command}; each stage or trial adds its own.
  StageOptions base;
};

// Starts the sampler and describes the machine. Errors: the sampler cannot start.
Result<Session> StartSession(const SessionSpec& spec);

}  // namespace sat::core
