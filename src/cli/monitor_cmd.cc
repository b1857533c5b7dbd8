// `saturate monitor`: nvidia-smi's query interface plus the host and a watched process tree; for a command it
// starts, also the training throughput the command reports over the helper channel. Flags and their checks here;
// the engine is monitor::Watch (monitor/watch.h).
#include <ext/stdio_filebuf.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>

#include <fstream>
#include <iostream>
#include <memory>

#include "util/safe_file.h"
#include "cli/command.h"
#include "cli/gpu_setup.h"
#include "cli/serve_flag.h"
#include "cli/terminal.h"
#include "monitor/fields.h"
#include "monitor/format.h"
#include "monitor/presenter.h"
#include "monitor/query.h"
#include "monitor/watch.h"
#include "run/runner.h"
#include "telemetry/sampler.h"
#include "util/strings.h"

namespace sat::cli {
namespace {

struct MonitorOptions {
  std::string query_gpu, query_host, format, filename, ids, proc_root = "/proc", sys_root = "/sys";
  double loop_s = 0;
  long loop_ms = 0;
  long count = 0;
  long pid = 0;
  bool json = false;
  bool list_fields = false;
  bool no_auto = false;
  ServeFlag serve;
  std::vector<std::string> command;
};

// The watched tree's command line for the exporter's `command` label: the command started, or --pid's argv.
std::string TreeCommand(const MonitorOptions& o) {
  std::vector<std::string> argv = o.command;
  if (argv.empty() && o.pid > 0) {
    std::ifstream in(fmt::format("{}/{}/cmdline", o.proc_root, o.pid));
    for (std::string word; std::getline(in, word, '\0');) argv.push_back(word);
  }
  return JoinNonEmpty(argv, " ");
}

Status RunMonitor(const MonitorOptions& o) {
  if (o.list_fields) {
    std::cout << monitor::FieldListing();
    return Status::Ok();
  }
  // The interval: -lms wins over -l; without either, a query prints one sample (as nvidia-smi does) and the
  // other views refresh every second.
  if (o.loop_ms < 0 || o.loop_s < 0 || !std::isfinite(o.loop_s))
    return UsageError("the loop interval must be positive");
  double interval_s = o.loop_ms > 0 ? o.loop_ms / 1000.0 : o.loop_s;
  // A deadline in nanoseconds from a longer interval would overflow (kMaxDurationS: no real interval is longer).
  if (interval_s > kMaxDurationS)
    return UsageError(fmt::format("loop interval {:g} s is longer than a year; give at most {:.0f} s", interval_s,
                                  kMaxDurationS));
  if (interval_s > 0 && interval_s < telemetry::Sampler::kMinIntervalS)
    return UsageError(fmt::format("loop interval {} ms is below the minimum of 10 ms", interval_s * 1000));
  if (o.count < 0) return UsageError(fmt::format("-c/--count must be at least 1, not {}", o.count));
  bool watching = !o.command.empty() || o.pid > 0;
  if (!o.command.empty() && o.pid > 0) return UsageError("give either --pid or a command after --, not both");
  if (o.pid < 0) return UsageError(fmt::format("--pid {} is not a process id", o.pid));
  if (o.pid > 0 && kill(static_cast<pid_t>(o.pid), 0) != 0 && errno == ESRCH)
    return UsageError(fmt::format("--pid {}: no such process", o.pid));
  if (o.no_auto && o.command.empty())
    return UsageError("--no-auto applies to a command started after --, e.g. saturate monitor --no-auto -- CMD");

  monitor::Format format;
  if (!o.format.empty()) {
    auto f = monitor::ParseFormat(o.format);
    if (!f) return f.error();
    format = *f;
  }
  if (o.json) format.kind = monitor::OutputKind::kJson;
  auto query = monitor::ParseQuery(o.query_gpu, o.query_host, watching);
  if (!query) return query.error();
  if (format.kind == monitor::OutputKind::kCsv && query->empty())
    return UsageError("--format=csv needs --query-gpu and/or --query-host (see --list-fields)");
  if (format.kind == monitor::OutputKind::kHuman && !query->empty()) format.kind = monitor::OutputKind::kCsv;
  // --serve alone prints nothing per sample: the page is the output.
  bool serving = o.serve.given();
  bool silent = serving && query->empty() && format.kind == monitor::OutputKind::kHuman;
  bool once = interval_s == 0 && !watching && !query->empty() && o.count == 0 && !serving;
  if (interval_s == 0) interval_s = 1.0;
  long count = once ? 1 : o.count;

  // Bound before anything starts, so a bad address or a port in use costs nothing.
  auto exporter = StartExporter(o.serve);
  if (!exporter) return exporter.error();
  auto gpu = OpenGpus(o.ids);
  if (!gpu) return gpu.error();
  // Said once, on stderr so CSV and JSON stay clean; the human view shows it in its own note line. Without a GPU a
  // per-GPU query has no rows (monitor::RowsOf), so the notice says where host fields still flow.
  if (!gpu->backend && (format.kind != monitor::OutputKind::kHuman || silent)) {
    if (query->per_gpu) {
      fmt::print(stderr, "saturate: {}; --query-gpu prints no rows without a GPU (for host fields alone use "
                         "--query-host)\n", gpu->note);
    } else {
      fmt::print(stderr, "saturate: {}; GPU fields read N/A\n", gpu->note);
    }
  }

  // Output: a file (-f) or stdout.
  // The file is opened close-on-exec (std::ofstream is not), so the watched command does not inherit it, and never
  // through a link (util/safe_file.h): an existing file of the user's is overwritten, as nvidia-smi -f does.
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> file_buffer;
  if (!o.filename.empty()) {
    auto fd = OpenForWriting(o.filename, WriteMode::kReplace);
    if (!fd) return UsageError(fmt::format("-f {}: {}", o.filename, fd.error().message));
    file_buffer = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd->Release(), std::ios::out);
  }
  std::ostream file(file_buffer.get());
  std::ostream& out = o.filename.empty() ? std::cout : file;

  monitor::HumanOptions human;
  human.gpu_backend = gpu->backend != nullptr;
  human.no_backend_reason = gpu->note;
  const bool tty = o.filename.empty() && isatty(STDOUT_FILENO);
  human.width = tty ? TerminalWidth(STDOUT_FILENO) : 0;
  std::unique_ptr<monitor::Presenter> presenter;
  if (!silent) presenter = monitor::MakePresenter(*query, format, human, tty && o.command.empty());
  if (exporter->figures) exporter->figures->SetTreeCommand(TreeCommand(o));

  const monitor::WatchOptions w{.interval_s = interval_s, .count = count, .command = o.command,
                                .no_auto = o.no_auto, .pid = o.pid, .proc_root = o.proc_root,
                                .sys_root = o.sys_root, .gpu = gpu->backend.get(), .gpu_indices = gpu->indices};
  auto end = monitor::Watch(w, presenter.get(), out, exporter->figures.get());
  if (!end) return end.error();
  if (end->interrupted) return Error{"interrupted", kExitInterrupted};
  if (const auto& outcome = end->outcome; outcome && outcome->exit_class != run::ExitClass::kFinished &&
                                          outcome->exit_class != run::ExitClass::kStopped) {
    fmt::print(stderr, "saturate: the command {}: {}\n", run::ExitClassName(outcome->exit_class), outcome->detail);
  }
  return Status::Ok();
}

}  // namespace

// nvidia-smi spells some options with one dash and several letters (-lms); CLI11 wants them long.
Action SetupMonitor(CLI::App& app) {
  auto o = std::make_shared<MonitorOptions>();
  app.add_option("--query-gpu", o->query_gpu, "GPU fields, comma-separated, nvidia-smi names (see --list-fields)");
  app.add_option("--query-host", o->query_host, "host fields (cpu.util, mem.used, disk.read, net.rx, ...) and proc.* fields");
  app.add_option("--format", o->format, "csv[,noheader][,nounits] or json");
  app.add_flag("--json", o->json, "JSON lines, numbers as numbers, null for N/A (same as --format=json)");
  app.add_option("-l,--loop", o->loop_s, "sample every SEC seconds");
  app.add_option("--lms,--loop-ms", o->loop_ms, "sample every MS milliseconds (at least 10); also spelled -lms");
  app.add_option("-c,--count", o->count, "stop after COUNT samples");
  app.add_option("-i,--id", o->ids, "GPU indexes to show, comma-separated (default: all)");
  app.add_option("-f,--filename", o->filename, "write samples to FILE instead of stdout");
  app.add_option("--pid", o->pid, "watch the process tree rooted at PID (adds proc.* fields)");
  app.add_flag("--no-auto", o->no_auto,
               "with -- CMD: no automatic instrumentation of PyTorch (SATURATE_AUTO=0); proc.samples_per_s then "
               "comes only from scripts that use `import saturate`");
  app.add_flag("--list-fields", o->list_fields, "list every field with its unit and exit");
  AddServeFlag(app, o->serve,
               "and the watched process tree (its samples/s with -- CMD); alone it prints nothing per sample and runs "
               "until interrupted or the command ends");
  app.add_option("--proc-root", o->proc_root, "where /proc is (for tests)")->group("");
  app.add_option("--sys-root", o->sys_root, "where /sys is (for tests)")->group("");
  app.add_option("command", o->command, "a command to start and watch until it exits (after --)");
  return [o] { return RunMonitor(*o); };
}

}  // namespace sat::cli
