#include "cli/app.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/command.h"
#include "run/cgroup.h"
#include "run/interrupt.h"
#include "util/fd_limit.h"
#include "util/strings.h"

namespace sat::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> table = {
      {"monitor", "sample GPUs (nvidia-smi compatible), CPU, RAM, disk and network, per process tree",
       "saturate monitor --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 1\n"
       "  saturate monitor --query-host=cpu.util,mem.used,disk.read -c 10 -- python3 train.py\n"
       "  saturate monitor --serve 127.0.0.1:9400 -- python3 train.py   (a Prometheus target, dcgm-exporter names)",
       &SetupMonitor},
      {"probe", "measure loader-only, compute-only and full throughput of a training command and name the bottleneck",
       "saturate probe --budget 2m -- python3 train.py --batch-size 64   (any PyTorch script, unchanged)\n"
       "  saturate probe --samples-per-step 64 -- python3 train.py   (a script that makes its batches itself)\n"
       "  saturate probe --parse saturate-example --batch-size 64 -- python3 train.py   (read its printed lines)",
       &SetupProbe},
      {"tune", "search batch size, workers, mixed precision and more for the most throughput; recommend a command",
       "saturate tune --budget 10m --out tune-out -- /usr/bin/python3 examples/train_images.py\n"
       "  saturate tune --knob batch_size=16:1024 --knob workers=0:8 -- python3 train.py --bs {batch_size}",
       &SetupTune},
      {"sweep", "run a hyper-parameter sweep packed onto GPUs (or CPU cores) by measurement; status, export, --resume",
       "saturate sweep sweep.yaml   (a W&B sweep spec; saturate sweep status sweep.yaml, --resume after a crash)\n"
       "  saturate sweep --grid lr=0.1,0.01 --grid bs=32,64 -- python3 train.py --lr {lr} --batch-size {bs}",
       &SetupSweep},
      {"simulate", "compare packing policies on a modelled cluster: makespan, GPU-hours, out-of-memory events",
       "saturate simulate --gpus 64 --runs 1000\n"
       "  saturate simulate --runs-file runs.json --policy one-per-gpu,saturate --json",
       &SetupSimulate},
  };
  return table;
}

namespace {

std::vector<std::string> CommandNames() {
  std::vector<std::string> names = {"help"};
  for (const auto& c : Commands()) names.emplace_back(c.name);
  return names;
}

void PrintOverview() {
  fmt::print(
      "saturate {} — get the most training throughput out of your GPUs\n\n"
      "usage: saturate <command> [options] [-- CMD ARGS...]\n\ncommands:\n",
      SATURATE_VERSION);
  for (const auto& c : Commands()) fmt::print("  {:<10} {}\n", c.name, c.summary);
  fmt::print("  {:<10} {}\n", "help", "list commands, or show one command's options: saturate help monitor");
  fmt::print("\nEvery command takes --help (with an example) and --json.\n");
}

int Fail(const Error& e) {
  fmt::print(stderr, "saturate: error: {}\n", e.message);
  // An interrupt exits as the shell reports a death by that signal: 130 for Ctrl-C, 143 for SIGTERM (a batch
  // system's time limit), 129 for SIGHUP.
  if (e.exit_code == kExitInterrupted && run::InterruptSignal() > 0) return 128 + run::InterruptSignal();
  return e.exit_code;
}

// Builds the CLI11 app for one command; `action` receives what runs after parsing.
std::unique_ptr<CLI::App> MakeApp(const Command& c, Action* action) {
  auto app = std::make_unique<CLI::App>(std::string(c.summary), "saturate " + std::string(c.name));
  app->footer(fmt::format("example:\n  {}", c.example));
  app->set_version_flag("--version", SATURATE_VERSION);
  *action = c.setup(*app);
  return app;
}

}  // namespace

namespace {

int Dispatch(int argc, char** argv) {
  if (argc < 2) {
    PrintOverview();
    return kExitUsage;
  }
  std::string first = argv[1];
  if (first == "--version" || first == "-V") {
    fmt::print("saturate {}\n", SATURATE_VERSION);
    return kExitOk;
  }
  if (first == "--help" || first == "-h") {
    PrintOverview();
    return kExitOk;
  }
  if (first == "help") {
    if (argc < 3) {
      PrintOverview();
      return kExitOk;
    }
    first = argv[2];
    for (const auto& c : Commands()) {
      if (c.name == first) {
        Action action;
        auto app = MakeApp(c, &action);
        fmt::print("{}", app->help());
        return kExitOk;
      }
    }
  }
  for (const auto& c : Commands()) {
    if (c.name != first) continue;
    Action action;
    auto app = MakeApp(c, &action);
    try {
      // argv[1] is the command name, which CLI11 would take as a positional argument.
      // nvidia-smi spells -lms with one dash; CLI11 takes multi-letter options with two.
      std::vector<std::string> args;
      bool after_dashes = false;
      for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") after_dashes = true;
        if (!after_dashes && a == "-lms") a = "--loop-ms";
        if (!after_dashes && StartsWith(a, "-lms=")) a = "--loop-ms=" + a.substr(5);
        args.push_back(std::move(a));
      }
      std::reverse(args.begin(), args.end());
      app->parse(args);
    } catch (const CLI::CallForHelp&) {
      fmt::print("{}", app->help());
      return kExitOk;
    } catch (const CLI::CallForVersion&) {
      fmt::print("saturate {}\n", SATURATE_VERSION);
      return kExitOk;
    } catch (const CLI::ParseError& e) {
      return Fail(UsageError(fmt::format("{}: {}\n  (see 'saturate {} --help')", c.name, e.what(), c.name)));
    }
    Status st = action();
    return st.ok() ? kExitOk : Fail(st.error());
  }
  std::string msg = fmt::format("unknown command '{}'", first);
  if (auto guess = ClosestMatch(first, CommandNames())) msg += fmt::format("; did you mean '{}'?", *guess);
  msg += " (see 'saturate help')";
  return Fail(UsageError(msg));
}

}  // namespace

int Main(int argc, char** argv) {
  // Errors are values; an exception that reaches here is a bug. It still ends in one line and exit 1, never in
  // std::terminate's abort, so an unattended sweep's shell script sees an ordinary failure. The test suite sets
  // SATURATE_ABORT_ON_INTERNAL_ERROR, so there the bug is not hidden: the exception aborts as before.
  const bool rethrow = std::getenv("SATURATE_ABORT_ON_INTERNAL_ERROR") != nullptr;
  // The soft descriptor limit (often 1024) up to the hard one, once: a sweep's runs, their logs and pipes, and the
  // exporter's clients all draw on it, and the exporter keeps a reserve of it for the runs (serve/connections.h).
  RaiseDescriptorLimit();
  try {
    const int code = Dispatch(argc, argv);
    // Said once, after the command's own output: saturate could not fence its runs here.
    if (auto why = run::RunCgroupsMissing()) {
      fmt::print(stderr,
                 "saturate: note: the runs had no cgroup of their own ({}); a process that leaves its run's process "
                 "group and clears its environment is not stopped with the run (SATURATE_CGROUP=off: no note)\n",
                 *why);
    }
    return code;
  } catch (const std::exception& e) {
    if (rethrow) throw;
    return Fail(Error{fmt::format("internal error (please report it): {}", e.what())});
  } catch (...) {
    if (rethrow) throw;
    return Fail(Error{"internal error (please report it): an unknown exception"});
  }
}

}  // namespace sat::cli
