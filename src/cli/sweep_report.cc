#include "cli/sweep_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "slurm/report.h"
#include "telemetry/sampler.h"
#include "util/atomic_file.h"

namespace sat::cli {

Result<sweep::SweepPage> WriteSweepReport(const std::string& journal_path, const std::string& out,
                                          std::optional<double> price, bool live) {
  auto page = sweep::ReadSweepPage(journal_path, slurm::AttemptNode);
  if (!page) return page.error();
  page->price_per_gpu_hour = price;
  page->live = live;
  if (Status st = WriteFileAtomically(out, sweep::SweepHtml(*page)); !st) return st.error();
  return page;
}

LiveReport::LiveReport(std::string journal_path, std::optional<double> price)
    : journal_(std::move(journal_path)), out_(sweep::ReportPathFor(journal_)), price_(price) {}

void LiveReport::Poll() {
  const double now = telemetry::MonotonicSeconds();
  if (failures_ >= kMaxFailures || now < next_ || !std::filesystem::exists(journal_)) return;
  auto written = WriteSweepReport(journal_, out_, price_, true);
  const double took = telemetry::MonotonicSeconds() - now;
  next_ = now + std::max(kEveryS, 20 * took);
  failures_ = written ? 0 : failures_ + 1;
  if (failures_ == kMaxFailures) {
    fmt::print(stderr, "saturate: warning: {} is not kept up to date: {}\n", out_, written.error().message);
  }
}

Status LiveReport::Finish() {
  auto written = WriteSweepReport(journal_, out_, price_, false);
  if (!written) return written.error();
  return Status::Ok();
}

}  // namespace sat::cli
