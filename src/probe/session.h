// One measurement session: what probe's stages and tune's trials share. One sampler (each stage or trial watches
// its own process tree on it), the machine they measure on, the live figures of --serve, and the options every
// stage or trial starts from, filled from the measurement flags the two commands share (cli/measurement_flags.h).
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "probe/machine.h"
#include "probe/stage.h"
#include "util/result.h"

namespace sat::probe {

struct SessionSpec {
  telemetry::GpuBackend* gpu = nullptr;    // not owned, may be null; must outlive the session
  int device = -1;                         // --device (NVML index); -1: the first GPU when there is one
  double span_s = 0;                       // seconds of samples the sampler keeps
  std::string proc_root = "/proc";
  monitor::LiveFigures* live = nullptr;    // --serve; not owned, may be null
  std::string command_name;                // "probe", "tune": the live figures' `command` label
  std::vector<std::string> argv;           // the command as given (tune renders it per trial)
  bool shell = false;
  std::optional<std::string> parse;        // --parse: the pattern is the only source of throughput
  bool auto_instrument = true;             // false: --no-auto; --parse turns it off too
  std::optional<double> samples_per_step;  // --samples-per-step
  bool verbose = false;
  double target_rel_half_width = 0.02;     // --target
};

struct Session {
  StageSampler sampling;  // running
  Machine machine;        // as the sampler's first sample saw it
  // argv, shell, the GPU's environment (StageOptionsOn), parse, auto_instrument, samples_per_step, verbose, the
  // estimator's target and the live figures labelled {command}; each stage or trial adds its own.
  StageOptions base;
};

// The spec of a probe's or a tune's session from its options (ProbeOptions, TuneOptions: the fields the two share
// by name); `parse` is left to the caller, whose types differ.
template <class Options>
SessionSpec SessionSpecOf(const Options& o, telemetry::GpuBackend* gpu, std::string command_name, double span_s) {
  SessionSpec spec;
  spec.gpu = gpu;
  spec.device = o.gpu_index;
  spec.span_s = span_s;
  spec.proc_root = o.proc_root;
  spec.live = o.live;
  spec.command_name = std::move(command_name);
  spec.argv = o.argv;
  spec.shell = o.shell;
  spec.auto_instrument = o.auto_instrument;
  spec.samples_per_step = o.samples_per_step;
  spec.verbose = o.verbose;
  spec.target_rel_half_width = o.target_rel_half_width;
  return spec;
}

// Starts the sampler and describes the machine. Errors: the sampler cannot start.
Result<Session> StartSession(const SessionSpec& spec);

}  // namespace sat::probe
