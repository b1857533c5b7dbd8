// A subcommand is one row of the table in app.cc: its name, a one-line summary, an example for --help,
// and a setup function that declares its options on a CLI11 sub-app and returns what runs after parsing.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace sat::cli {

using Action = std::function<Status()>;

struct Command {
  std::string_view name;
  std::string_view summary;
  std::string_view example;
  Action (*setup)(CLI::App& app);
};

// The table, in the order `saturate help` lists it.
const std::vector<Command>& Commands();

// Each command's setup, defined in <name>_cmd.cc.
Action SetupMonitor(CLI::App& app);
Action SetupProbe(CLI::App& app);
Action SetupTune(CLI::App& app);
Action SetupSweep(CLI::App& app);
Action SetupSimulate(CLI::App& app);

}  // namespace sat::cli
