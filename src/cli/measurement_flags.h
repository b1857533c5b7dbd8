// The flags probe and tune share: how the command is measured (--parse, --batch-size, --no-auto,
// --samples-per-step), which GPU (--device), what a GPU-hour costs and what other hardware would give
// (--price-per-hour, --what-if), and how the command runs (-v, --shell, the command after --). One declaration, one
// help text and one check each, so the two commands cannot drift apart.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/session.h"
#include "core/what_if.h"
#include "util/result.h"

namespace sat::cli {

struct MeasurementFlags {
  std::string parse;
  double batch_size = 0;             // 0: not given
  bool no_auto = false;
  std::string samples_per_step;      // as typed; "" when not given
  int device = -1;                   // NVML index; -1: not given
  double price_per_hour = 0;         // 0: not given
  std::string what_if;
  bool verbose = false;
  bool shell = false;
  std::vector<std::string> command;  // after --
};

// Declares the shared flags on `app`. `batch_size_more`: what --batch-size means besides --parse's samples per
// step in this command ("" for nothing more); `price_gives`: what the report gives for --price-per-hour;
// `what_if_of`: what --what-if estimates.
void AddMeasurementFlags(CLI::App& app, MeasurementFlags& flags, std::string_view batch_size_more,
                         std::string_view price_gives, std::string_view what_if_of);

// The flags checked and typed. Usage errors name the flag, the value and what is wanted. `session` holds the
// command, --device, --parse, --batch-size, --no-auto, --samples-per-step, -v and --shell; the command's own
// flags (--target, --serve) fill the rest of it.
struct CheckedMeasurement {
  core::SessionOptions session;
  std::optional<double> price_per_gpu_hour;
  std::vector<core::WhatIfTarget> what_if;
};
Result<CheckedMeasurement> CheckMeasurementFlags(const MeasurementFlags& flags);

// Before a probe or tune measures anything: stops what an earlier probe or tune that was killed (kill -9, a lost
// machine session) left running, its DataLoader workers and launcher ranks, which would share the machine with this
// measurement, and says so on stderr. Their ids are "probe-<pid>-..." (core/stage.cc); a live probe's are left.
void StopRunsOfKilledMeasurements();

}  // namespace sat::cli
