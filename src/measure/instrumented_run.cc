#include "measure/instrumented_run.h"

#include <fmt/format.h>

#include <utility>

#include "run/environment.h"
#include "telemetry/proc_maps.h"
#include "util/utf8.h"

namespace sat::measure {

void AutoFailureLine::Offer(std::string_view line) {
  std::lock_guard lock(mu_);
  // A child's bytes: cut between characters.
  if (line_.empty() && line.substr(0, kPrefix.size()) == kPrefix) line_ = std::string(line.substr(0, Utf8PrefixLength(line, 400)));
}

std::string AutoFailureLine::Get() const {
  std::lock_guard lock(mu_);
  return line_;
}

Result<std::unique_ptr<InstrumentedRun>> InstrumentedRun::Start(InstrumentedLaunch launch, std::string run_id,
                                                                HelperChannel* shared) {
  // Without its Python side a run would go unmeasured; say where saturate looked and what to do instead.
  if (Status helper = run::CheckHelperPythonDir(); !helper) return helper.error();
  std::unique_ptr<InstrumentedRun> r(new InstrumentedRun());
  r->run_id_ = std::move(run_id);
  if (shared == nullptr) {
    auto channel = HelperChannel::Open();
    if (!channel) return channel.error();
    r->own_channel_ = std::move(*channel);
    shared = r->own_channel_.get();
  }
  r->channel_path_ = shared->path();

  launch.helper.channel_path = r->channel_path_;
  launch.helper.run_id = r->run_id_;
  ApplyHelperEnv(launch.helper, launch.spec);
  // Every watcher gets the helper's failure notice; the caller's own line hook still sees each line.
  launch.spec.on_line = [failure = r->auto_failure_, theirs = std::move(launch.spec.on_line)](run::Stream stream,
                                                                                             std::string_view line) {
    if (stream == run::Stream::kStderr) failure->Offer(line);
    if (theirs) theirs(stream, line);
  };
  auto started = run::Run::Start(std::move(launch.spec));
  if (!started) return started.error();
  r->run_ = std::move(*started);
  return r;
}

Status InstrumentedRun::Drain(int timeout_ms, const std::function<void(const HelperMessage&)>& on_message) {
  if (!own_channel_) return Error{fmt::format("run {} reports on a shared channel: its owner polls it", run_id_)};
  auto messages = own_channel_->Poll(timeout_ms);
  if (!messages) return messages.error();
  for (const HelperMessage& m : *messages) {
    if (Accept(m) && on_message) on_message(m);
  }
  return Status::Ok();
}

bool InstrumentedRun::Accept(const HelperMessage& m) {
  if (m.run != run_id_) return false;
  switch (m.type) {
    case MessageType::kHello:
      signs_.helper_seen = true;
      signs_.auto_seen = signs_.auto_seen || m.automatic;
      if (m.torch) signs_.torch_loaded = true;
      break;
    case MessageType::kProgress:
    case MessageType::kDone:
      signs_.helper_seen = true;
      break;
    default:
      break;
  }
  return true;
}

void InstrumentedRun::LookForTorch(const std::vector<pid_t>& pids, const std::string& proc_root) {
  for (pid_t pid : pids) {
    if (signs_.torch_loaded == true) return;
    if (std::optional<bool> torch = telemetry::MapsTorch(pid, proc_root)) signs_.torch_loaded = *torch;
  }
}

}  // namespace sat::measure
