#include "slurm/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "slurm/node_wrapper.h"
#include "sweep/journal.h"
#include "util/strings.h"

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

std::string Asked(const SlurmRequest& r) {
  std::vector<std::string> parts;
  if (!r.Gres().empty()) parts.push_back(r.Gres());
  parts.push_back(r.cpus ? fmt::format("{} cpu", *r.cpus) : "- cpu");
  parts.push_back(r.mem_mib ? FormatBytes(*r.mem_mib << 20) : "- mem");
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string Used(const Measurements& m) {
  std::vector<std::string> parts;
  if (m.peak_gpu_memory_bytes) parts.push_back("gpu " + FormatBytes(*m.peak_gpu_memory_bytes));
  parts.push_back(m.cpu_pct ? fmt::format("{:.2f} cpu", *m.cpu_pct / 100) : "- cpu");
  parts.push_back(m.rss_bytes ? FormatBytes(*m.rss_bytes) : "- mem");
  return fmt::format("{}", fmt::join(parts, " "));
}

template <class T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

SlurmReport BuildSlurmReport(const std::vector<RunRecord>& runs, const std::vector<AttemptRecord>& attempts,
                             const std::vector<double>& durations_s) {
  SlurmReport report;
  for (size_t i = 0; i < runs.size() && i < attempts.size(); ++i) {
    const AttemptRecord& a = attempts[i];
    if (a.slurm_job.empty()) continue;
    SlurmRunUsage u;
    u.key = runs[i].key;
    u.index = runs[i].index;
    u.state = std::string(RunStateName(runs[i].state));
    u.job_id = a.slurm_job;
    u.asked = SlurmRequest::FromJson(nlohmann::json::parse(a.slurm_request, nullptr, false));
    u.used = runs[i].measurements;
    u.duration_s = i < durations_s.size() ? durations_s[i] : 0;
    const double hours = u.duration_s / 3600;
    if (u.asked.sized) ++report.sized;
    if (u.asked.gpu_fraction > 0) {
      report.gpu_hours_asked += hours * u.asked.gpu_fraction;
      report.gpu_hours_one_per_run += hours * std::max(1.0, std::ceil(u.asked.gpu_fraction));
    }
    if (u.asked.cpus && u.used.cpu_pct) {
      report.cpu_hours_asked += hours * *u.asked.cpus;
      report.cpu_hours_used += hours * *u.used.cpu_pct / 100;
    }
    report.runs.push_back(std::move(u));
  }
  return report;
}

std::string AttemptNode(const AttemptRecord& a) {
  if (a.log_dir.empty()) return "";
  for (const char* name : {kStartedFile, kOutcomeFile}) {
    auto file = ReadJsonFile(a.log_dir + "/" + name);
    if (!file.ok() || !*file) continue;
    auto node = (*file)->find("node");
    if (node != (*file)->end() && node->is_string() && !node->get<std::string>().empty()) return node->get<std::string>();
  }
  return "";
}

Result<std::optional<SlurmReport>> ReadSlurmReport(const std::string& journal_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(journal_path, ec)) return std::optional<SlurmReport>();
  auto journal = Journal::OpenReadOnly(journal_path);
  if (!journal) return journal.error();
  auto runs = (*journal)->Runs();
  if (!runs) return runs.error();
  std::vector<RunRecord> with_attempt;
  std::vector<AttemptRecord> latest;
  std::vector<double> durations;
  for (const RunRecord& r : *runs) {
    auto attempts = (*journal)->Attempts(r.key);
    if (!attempts) return attempts.error();
    auto ended = std::find_if(attempts->rbegin(), attempts->rend(),
                              [](const AttemptRecord& a) { return a.ended_unix && !a.slurm_job.empty(); });
    if (ended == attempts->rend()) continue;
    // The node's own run time; the journal's times include the wait in Slurm's queue.
    double duration = *ended->ended_unix - ended->started_unix;
    if (auto file = ReadJsonFile(ended->log_dir + "/" + kOutcomeFile); file.ok() && *file) {
      duration = (*file)->value("duration_s", duration);
    }
    with_attempt.push_back(r);
    latest.push_back(*ended);
    durations.push_back(duration);
  }
  if (latest.empty()) return std::optional<SlurmReport>();
  return std::optional<SlurmReport>(BuildSlurmReport(with_attempt, latest, durations));
}

std::string FormatSlurmReport(const SlurmReport& report, size_t max_rows, std::optional<double> price) {
  std::string out = fmt::format("Slurm: {} of {} runs asked for a request sized from measurement\n", report.sized,
                                report.runs.size());
  out += fmt::format("{:>5}  {:<14} {:<12} {:<34} {:<30} {:>8}\n", "#", "key", "job", "asked", "used", "run s");
  size_t shown = 0;
  for (const SlurmRunUsage& u : report.runs) {
    if (max_rows > 0 && shown++ >= max_rows) {
      out += fmt::format("  ... {} more (sweep status --all)\n", report.runs.size() - max_rows);
      break;
    }
    out += fmt::format("{:>5}  {:<14} {:<12} {:<34} {:<30} {:>8.1f}\n", u.index, u.key.substr(0, 14), u.job_id,
                       Asked(u.asked), Used(u.used), u.duration_s);
  }
  if (report.gpu_hours_one_per_run > 0) {
    const double saved = report.gpu_hours_one_per_run - report.gpu_hours_asked;
    out += fmt::format("GPU-hours: {:.3f} asked, {:.3f} with one GPU per run: {:.3f} saved ({:.0f}%)\n",
                       report.gpu_hours_asked, report.gpu_hours_one_per_run, saved,
                       100 * saved / report.gpu_hours_one_per_run);
    if (price) {
      out += fmt::format("At {:.2f} per GPU-hour: {:.2f} asked, {:.2f} with one GPU per run, {:.2f} saved\n", *price,
                         report.gpu_hours_asked * *price, report.gpu_hours_one_per_run * *price, saved * *price);
    }
  } else {
    out += "GPU-hours: none asked (the runs used no GPU)\n";
  }
  if (report.cpu_hours_asked > 0) {
    out += fmt::format("CPU-hours: {:.4f} asked, {:.4f} used\n", report.cpu_hours_asked, report.cpu_hours_used);
  }
  return out;
}

nlohmann::json SlurmReportJson(const SlurmReport& report, std::optional<double> price) {
  auto money = [&](double hours) { return price ? nlohmann::json(hours * *price) : nlohmann::json(nullptr); };
  nlohmann::json runs = nlohmann::json::array();
  for (const SlurmRunUsage& u : report.runs) {
    runs.push_back({{"key", u.key},
                    {"index", u.index},
                    {"state", u.state},
                    {"job", u.job_id},
                    {"asked", u.asked.ToJson()},
                    {"used",
                     {{"cpu_pct", OrNull(u.used.cpu_pct)},
                      {"rss_bytes", OrNull(u.used.rss_bytes)},
                      {"peak_gpu_memory_bytes", OrNull(u.used.peak_gpu_memory_bytes)}}},
                    {"duration_s", u.duration_s}});
  }
  return {{"sized_runs", report.sized},
          {"gpu_hours_asked", report.gpu_hours_asked},
          {"gpu_hours_one_per_run", report.gpu_hours_one_per_run},
          {"gpu_hours_saved", report.gpu_hours_one_per_run - report.gpu_hours_asked},
          {"price_per_gpu_hour", OrNull(price)},
          {"cost_asked", money(report.gpu_hours_asked)},
          {"cost_one_per_run", money(report.gpu_hours_one_per_run)},
          {"cpu_hours_asked", report.cpu_hours_asked},
          {"cpu_hours_used", report.cpu_hours_used},
          {"runs", runs}};
}

}  // namespace sat::slurm
