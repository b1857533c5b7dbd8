#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "sweep/controller_internal.h"
#include "sweep/plan.h"
#include "util/atomic_file.h"
#include "util/json_text.h"

namespace sat::sweep::internal {

std::vector<Admission> Controller::Admissions(double now, const telemetry::Sample& sample) {
  if (stager_ && !stager_->MayStart(live_.size(), result_.started)) return {};
  std::vector<Admission> admissions = packer_->Admit(now, DeviceStates(sample), HostOf(sample.host, links_));
  // Until the first run has shown whether its loader waits on storage, it runs alone: the others go back to the
  // queue, to start on the copy if one is made.
  if (stager_ && stager_->Undecided() && admissions.size() > 1) {
    for (size_t i = 1; i < admissions.size(); ++i) {
      const Planned& planned = plan_.at(admissions[i].key);
      packer_->Left(admissions[i].key, LeaveReason::kOther, Footprint{});
      packer_->Enqueue(admissions[i].key, planned.index, ShapeOf(spec_, planned.params));
    }
    admissions.resize(1);
  }
  return admissions;
}

void Controller::JudgeStaging(const Attempt& a, bool final) {
  if (!stager_ || !stager_->Undecided()) return;
  const RunMeter& meter = a.watch.meter();
  const std::optional<TrainingSoFar> t = meter.Training();
  if (!final && !a.measured &&
      !(t && t->trained_s >= kJudgeAfterS && t->readings >= kJudgeReadings && t->samples_per_s.value_or(0) > 0)) {
    return;
  }
  FetchSignals signals;
  signals.cores = static_cast<unsigned>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (t) {
    signals.wait_share = t->wait_share;
    signals.cpu_pct = t->cpu_pct;
    signals.blocked = t->blocked;
    signals.workers = t->workers.value_or(0);
    signals.samples_per_s = t->samples_per_s.value_or(0);
  } else {
    // It never trained: what it showed at all.
    signals.wait_share = meter.totals().WaitShare();
    signals.cpu_pct = meter.footprint().cpu_pct;
    signals.blocked = meter.blocked();
    signals.workers = meter.workers().value_or(0);
  }
  if (!stager_->Judge(signals, final)) return;  // the cold reads are still being made
  const StagingReport report = stager_->Report();
  Emit(SweepEvent::Kind::kNote, nullptr,
       fmt::format("staging: {}: {}",
                   report.decision == "copying"  ? "copying the data to a local drive"
                   : report.decision == "staged" ? "the runs read the local copy"
                                                 : "the runs read the source",
                   report.reason));
  WriteStaging();
}

void Controller::RestartOnCopy() {
  for (auto& [key, a] : live_) {
    if (a->on_copy || !a->restarting.empty()) continue;
    RunProgress progress;
    if (const std::optional<TrainingSoFar> t = a->watch.meter().Training()) {
      progress.samples = t->samples;
      progress.samples_per_s = t->samples_per_s.value_or(0);
      progress.epoch_samples = t->epoch_samples;
      progress.startup_s = t->startup_s;
    }
    const RestartChoice choice = stager_->OnSource(a->index, key, progress);
    if (choice.restart) {
      a->restarting = choice.why;
      a->process->RequestStop();
    }
    Emit(SweepEvent::Kind::kNote, a.get(),
         fmt::format("on the source when the copy was made: {} ({})",
                     choice.restart ? "restarting it on the copy" : "it finishes there", choice.why));
  }
}

// `sweep status` reads it beside the runs' logs; a failure to write it costs the status line, not the sweep.
void Controller::WriteStaging() const {
  if (!stager_) return;
  std::error_code ec;
  std::filesystem::create_directories(o_.log_dir, ec);
  (void)WriteFileAtomically(o_.log_dir + "/staging.json", JsonText(StagingJson(stager_->Report()), 1) + "\n");
}

}  // namespace sat::sweep::internal
