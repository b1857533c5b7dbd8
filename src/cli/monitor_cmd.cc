// `saturate monitor`: nvidia-smi's query interface plus the host and a watched process tree; for a command it
// starts, also the training throughput the command reports over the helper channel.
#include <ext/stdio_filebuf.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/command.h"
#include "cli/gpu_setup.h"
#include "cli/serve_flag.h"
#include "measure/channel.h"
#include "monitor/csv_writer.h"
#include "monitor/fields.h"
#include "monitor/format.h"
#include "monitor/human_view.h"
#include "monitor/json_writer.h"
#include "monitor/query.h"
#include "monitor/training.h"
#include "run/environment.h"
#include "run/interrupt.h"
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
    std::ifstream in(fmt::format("/proc/{}/cmdline", o.pid));
    for (std::string word; std::getline(in, word, '\0');) argv.push_back(word);
  }
  return JoinNonEmpty(argv, " ");
}

void ListFields(std::ostream& out) {
  for (const auto& f : monitor::AllFields()) {
    std::string names(f.name());
    for (size_t i = 1; i < f.names.size(); ++i) names += fmt::format(" (alias {})", f.names[i]);
    std::string_view scope = f.scope == monitor::Scope::kGpu    ? "--query-gpu"
                             : f.scope == monitor::Scope::kHost ? "--query-host"
                                                                : "--query-host, with --pid or -- CMD";
    out << fmt::format("{:<28} {:<8} {:<36} {}\n", names, f.unit.empty() ? "" : fmt::format("[{}]", f.unit), scope,
                       f.help);
  }
}

// Something that formats samples: CSV, JSON lines, or the human view.
class Presenter {
 public:
  virtual ~Presenter() = default;
  virtual void Begin(std::ostream& out) {}
  virtual void Write(std::ostream& out, const telemetry::Sample& s) = 0;
};

class CsvPresenter : public Presenter {
 public:
  CsvPresenter(monitor::Query q, monitor::Format f) : writer_(std::move(q), f) {}
  void Begin(std::ostream& out) override { writer_.WriteHeader(out); }
  void Write(std::ostream& out, const telemetry::Sample& s) override { writer_.WriteSample(out, s); }

 private:
  monitor::CsvWriter writer_;
};

class JsonPresenter : public Presenter {
 public:
  explicit JsonPresenter(monitor::Query q) : writer_(std::move(q)) {}
  void Write(std::ostream& out, const telemetry::Sample& s) override { writer_.WriteSample(out, s); }

 private:
  monitor::JsonWriter writer_;
};

class HumanPresenter : public Presenter {
 public:
  HumanPresenter(monitor::HumanOptions o, bool redraw) : view_(std::move(o)), redraw_(redraw) {}
  void Write(std::ostream& out, const telemetry::Sample& s) override {
    auto lines = view_.Lines(s);
    if (redraw_) out << monitor::RedrawPrefix(previous_);
    for (const auto& l : lines) out << l << '\n';
    if (!redraw_) out << '\n';
    previous_ = lines.size();
  }

 private:
  monitor::HumanView view_;
  bool redraw_;
  size_t previous_ = 0;
};

size_t TerminalWidth() {
  if (const char* c = getenv("COLUMNS")) {
    if (auto v = ParseInt(c); v && *v > 0) return static_cast<size_t>(*v);
  }
  return 120;
}

// The helper channel of the started command and its training rates (docs/helper-protocol.md).
class TrainingFeed {
 public:
  TrainingFeed(std::unique_ptr<measure::HelperChannel> channel, std::string run_id)
      : channel_(std::move(channel)), run_id_(run_id), meter_(std::move(run_id)) {}

  const std::string& path() const { return channel_->path(); }
  const std::string& run_id() const { return run_id_; }

  // Reads what arrived, waiting up to `timeout_ms` for the first datagram. The kernel queues only a few, so the
  // loop calls this often.
  Status Drain(int timeout_ms) {
    auto messages = channel_->Poll(timeout_ms);
    if (!messages) return messages.error();
    for (const measure::HelperMessage& m : *messages) meter_.Add(m);
    return Status::Ok();
  }

  // The interval's rates into the sample's tree, and a new interval.
  Status Annotate(telemetry::Sample& s) {
    if (auto status = Drain(0); !status.ok()) return status;
    const monitor::TrainingRates rates = meter_.Take();
    // A tree that is gone has no rates, like its CPU.
    if (s.tree && s.tree->alive) {
      s.tree->samples_per_s = rates.samples_per_s;
      s.tree->steps_per_s = rates.steps_per_s;
      s.tree->data_wait_share = rates.data_wait_share;
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<measure::HelperChannel> channel_;
  std::string run_id_;
  monitor::TrainingMeter meter_;
};

Status RunMonitor(const MonitorOptions& o) {
  if (o.list_fields) {
    ListFields(std::cout);
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
  // The file is opened close-on-exec (std::ofstream is not), so the watched command does not inherit it.
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> file_buffer;
  if (!o.filename.empty()) {
    const int fd = open(o.filename.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Error{fmt::format("cannot write -f {}: {}", o.filename, strerror(errno))};
    file_buffer = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd, std::ios::out);
  }
  std::ostream file(file_buffer.get());
  std::ostream& out = o.filename.empty() ? std::cout : file;

  std::unique_ptr<Presenter> presenter;
  switch (format.kind) {
    case monitor::OutputKind::kCsv: presenter = std::make_unique<CsvPresenter>(*query, format); break;
    case monitor::OutputKind::kJson: presenter = std::make_unique<JsonPresenter>(*query); break;
    case monitor::OutputKind::kHuman: {
      monitor::HumanOptions h;
      h.gpu_backend = gpu->backend != nullptr;
      h.no_backend_reason = gpu->note;
      bool tty = o.filename.empty() && isatty(STDOUT_FILENO);
      h.width = tty ? TerminalWidth() : 0;
      presenter = std::make_unique<HumanPresenter>(h, tty && o.command.empty());
      break;
    }
  }
  if (silent) presenter.reset();

  telemetry::SamplerOptions so;
  so.interval_s = interval_s;
  so.capacity = 16;
  so.roots = {o.proc_root, o.sys_root};
  so.gpu = gpu->backend.get();
  so.gpu_indices = gpu->indices;
  auto sampler = telemetry::Sampler::Create(so);
  if (!sampler) return sampler.error();

  run::InstallInterruptHandlers();
  std::unique_ptr<run::Run> child;
  std::optional<TrainingFeed> training;
  if (!o.command.empty()) {
    // The command reports its training over the helper channel: PyTorch programs through the automatic
    // instrumentation that saturate's python/ folder loads, others through `import saturate`.
    auto channel = measure::HelperChannel::Open();
    if (!channel) return channel.error();
    training.emplace(std::move(*channel), fmt::format("monitor-{}", getpid()));
    run::RunSpec spec;
    spec.argv = o.command;
    spec.echo = true;
    spec.env["SATURATE_CHANNEL"] = training->path();
    spec.env["SATURATE_RUN_ID"] = training->run_id();
    // A few reports per sampling interval, so each interval has its own rate.
    spec.env["SATURATE_REPORT_INTERVAL"] = fmt::format("{:g}", std::clamp(interval_s / 4, 0.02, 0.1));
    if (o.no_auto) spec.env["SATURATE_AUTO"] = "0";
    spec.pythonpath_prepend = {run::HelperPythonDir()};
    auto r = run::Run::Start(spec);
    if (!r) return r.error();
    child = std::move(*r);
    if (auto done = child->Poll(); done && done->exit_class == run::ExitClass::kStartFailed)
      return Error{done->detail};
    (*sampler)->Watch(child->pid());
  } else if (o.pid > 0) {
    (*sampler)->Watch(static_cast<pid_t>(o.pid));
  }
  if (exporter->figures) exporter->figures->SetTreeCommand(TreeCommand(o));

  using Clock = std::chrono::steady_clock;
  // Waits up to `seconds`, reading the helper channel meanwhile (its queue is short).
  auto wait = [&](double seconds) -> Status {
    if (!training) {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      return Status::Ok();
    }
    return training->Drain(static_cast<int>(std::ceil(seconds * 1000)));
  };
  // One sample, with the training rates of the interval it closes.
  auto sample = [&]() -> Result<telemetry::Sample> {
    telemetry::Sample s = (*sampler)->SampleOnce();
    if (training) {
      if (auto status = training->Annotate(s); !status.ok()) return status.error();
    }
    if (exporter->figures) exporter->figures->SetSample(s);
    return s;
  };

  // A priming sample gives the first printed sample its rates (CPU, disk, network need two readings).
  if (auto primed = sample(); !primed) return primed.error();
  if (auto status = wait(std::min(interval_s, 0.2)); !status.ok()) return status;

  if (presenter) presenter->Begin(out);
  auto start = Clock::now();
  for (long k = 0;; ++k) {
    auto s = sample();
    if (!s) return s.error();
    if (presenter) presenter->Write(out, *s);
    out.flush();
    if (count > 0 && k + 1 >= count) break;
    if (o.pid > 0 && s->tree && !s->tree->alive) break;
    if (child && child->Poll()) break;
    // Wait for the next slot of a fixed schedule, waking early for an interrupt or the child's end.
    auto next = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((k + 1) * interval_s));
    while (Clock::now() < next && !run::Interrupted() && !(child && child->Poll())) {
      const double left_s = std::chrono::duration<double>(next - Clock::now()).count();
      if (auto status = wait(std::clamp(left_s, 0.0, 0.02)); !status.ok()) return status;
    }
    if (run::Interrupted()) break;
    if (child && child->Poll()) {
      // One last sample shows the tree as it ended, with the command's last reports.
      auto last = sample();
      if (!last) return last.error();
      if (presenter) presenter->Write(out, *last);
      break;
    }
  }
  if (child) {
    child->RequestStop();
    run::RunOutcome outcome = child->Wait();
    if (run::Interrupted()) return Error{"interrupted", kExitInterrupted};
    if (outcome.exit_class != run::ExitClass::kFinished && outcome.exit_class != run::ExitClass::kStopped)
      fmt::print(stderr, "saturate: the command {}: {}\n", run::ExitClassName(outcome.exit_class), outcome.detail);
  }
  if (run::Interrupted()) return Error{"interrupted", kExitInterrupted};
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
