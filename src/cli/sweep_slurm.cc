#include "cli/sweep_slurm.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/gpu_setup.h"
#include "run/interrupt.h"
#include "slurm/node_wrapper.h"
#include "slurm/slurm_backend.h"
#include "slurm/report.h"

namespace sat::cli {
namespace {

// Asked on a terminal only: in a batch script there is nobody to answer, and the jobs stay for --resume.
bool AskToCancel(size_t jobs) {
  if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) return false;
  fmt::print(stderr, "\ncancel the sweep's {} Slurm job{} (scancel)? [y/N] ", jobs, jobs == 1 ? "" : "s");
  std::string answer;
  std::getline(std::cin, answer);
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

}  // namespace

Result<sweep::SweepResult> RunSweepOnSlurm(const sweep::Spec& spec, const sweep::SweepOptions& o, bool cancel) {
  slurm::SlurmSweepOptions s;
  s.journal_path = o.journal_path;
  // The nodes are told absolute paths: their working directory is not ours.
  std::error_code ec;
  s.log_dir = std::filesystem::absolute(o.log_dir, ec).lexically_normal().string();
  s.resume = o.resume;
  s.seed = o.seed;
  s.saturate_binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Error{fmt::format("cannot find saturate's own binary for the jobs to run: {}", ec.message())};
  s.warmup_s = o.warmup_s;
  s.window_s = o.window_s;
  s.cancel_on_interrupt = cancel;
  s.confirm_cancel = AskToCancel;
  s.on_event = o.on_event;
  return slurm::RunSlurmSweep(spec, s);
}

Result<std::string> SlurmReportText(const std::string& journal_path, bool all, std::optional<double> price) {
  auto report = slurm::ReadSlurmReport(journal_path);
  if (!report) return report.error();
  if (!*report) return std::string();
  return slurm::FormatSlurmReport(**report, all ? 0 : 20, price);
}

Result<nlohmann::json> SlurmReportJsonOf(const std::string& journal_path, std::optional<double> price) {
  auto report = slurm::ReadSlurmReport(journal_path);
  if (!report) return report.error();
  if (!*report) return nlohmann::json(nullptr);
  return slurm::SlurmReportJson(**report, price);
}

Status RunOneCommand(const std::string& job_file) {
  auto gpus = OpenGpus("");
  if (!gpus) return gpus.error();
  sweep::NodeOptions options;
  if (gpus->backend && gpus->backend->DeviceCount() > 0) options.gpu = gpus->backend.get();
  run::InstallInterruptHandlers();
  auto code = slurm::RunNodeJob(job_file, options);
  if (!code) return code.error();
  if (*code != 0) {
    const std::string dir = std::filesystem::path(job_file).parent_path().string();
    return Error{fmt::format("the run did not finish; {}/{} says how it ended", dir, sweep::kOutcomeFile)};
  }
  return Status::Ok();
}

}  // namespace sat::cli
