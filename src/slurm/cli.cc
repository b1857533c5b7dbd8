#include "slurm/cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "run/runner.h"
#include "run/spawn.h"
#include "util/strings.h"

namespace sat::slurm {

// The Slurm backend works on sweep\'s spec, plan, journal and records throughout.
using namespace sweep;

namespace {

constexpr double kCommandLimitS = 60;

std::optional<int> Int(std::string_view text) {
  auto v = ParseInt(Trim(text));
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::string JoinIds(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

}  // namespace

JobState ParseJobState(std::string_view text) {
  text = Trim(text);
  if (auto space = text.find(' '); space != std::string_view::npos) text = text.substr(0, space);
  while (!text.empty() && text.back() == '+') text.remove_suffix(1);
  const std::string s = ToLower(text);
  if (s == "pending" || s == "requeued" || s == "requeue_hold" || s == "requeue_fed" || s == "resv_del_hold" ||
      s == "configuring") {
    return JobState::kPending;
  }
  if (s == "running" || s == "completing" || s == "suspended" || s == "stopped" || s == "signaling" ||
      s == "stage_out" || s == "resizing") {
    return JobState::kRunning;
  }
  if (s == "completed") return JobState::kCompleted;
  if (s == "failed") return JobState::kFailed;
  if (s == "cancelled") return JobState::kCancelled;
  if (s == "timeout" || s == "deadline") return JobState::kTimeout;
  if (s == "preempted") return JobState::kPreempted;
  if (s == "node_fail" || s == "boot_fail" || s == "launch_failed") return JobState::kNodeFail;
  if (s == "out_of_memory") return JobState::kOutOfMemory;
  return JobState::kUnknown;
}

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kPending: return "pending";
    case JobState::kRunning: return "running";
    case JobState::kCompleted: return "completed";
    case JobState::kFailed: return "failed";
    case JobState::kCancelled: return "cancelled";
    case JobState::kTimeout: return "timeout";
    case JobState::kPreempted: return "preempted";
    case JobState::kNodeFail: return "node_fail";
    case JobState::kOutOfMemory: return "out_of_memory";
    case JobState::kUnknown: return "unknown";
  }
  return "unknown";
}

bool JobActive(JobState s) { return s == JobState::kPending || s == JobState::kRunning; }

std::vector<QueuedJob> ParseSqueue(std::string_view text) {
  std::vector<QueuedJob> jobs;
  for (const std::string& line : Split(text, '\n')) {
    if (Trim(line).empty()) continue;
    std::vector<std::string> f = Split(line, '|');
    if (f.size() < 3) continue;
    f.resize(6);
    jobs.push_back(QueuedJob{std::string(Trim(f[0])), f[1], ParseJobState(f[2]), f[3], f[4], f[5]});
  }
  return jobs;
}

Result<std::string> ParseSbatchId(std::string_view text) {
  for (const std::string& line : Split(text, '\n')) {
    std::string_view id = Trim(line);
    if (auto semi = id.find(';'); semi != std::string_view::npos) id = id.substr(0, semi);
    if (!id.empty() && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::string(id);
    }
  }
  return Error{fmt::format("sbatch printed no job id: '{}'", Trim(text))};
}

std::map<std::string, std::string> ParseScontrolLine(std::string_view line) {
  std::map<std::string, std::string> fields;
  std::string* last = nullptr;
  for (const std::string& word : Split(Trim(line), ' ')) {
    if (word.empty()) continue;
    const auto eq = word.find('=');
    const bool key_like = eq != std::string::npos && eq > 0 &&
                          std::all_of(word.begin(), word.begin() + static_cast<long>(eq), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '/' || c == '_';
                          });
    if (key_like) {
      last = &fields[word.substr(0, eq)];
      *last = word.substr(eq + 1);
    } else if (last) {
      *last += " " + word;
    }
  }
  return fields;
}

std::vector<JobInfo> ParseScontrolJobs(std::string_view text) {
  std::vector<JobInfo> jobs;
  for (const std::string& line : Split(text, '\n')) {
    auto f = ParseScontrolLine(line);
    if (!f.count("JobId")) continue;
    JobInfo j;
    j.id = f["JobId"];
    if (f.count("ArrayJobId") && f.count("ArrayTaskId") && f["ArrayTaskId"].find_first_of("[-,") == std::string::npos) {
      j.id = f["ArrayJobId"] + "_" + f["ArrayTaskId"];
    }
    j.state = ParseJobState(f["JobState"]);
    j.reason = f["Reason"];
    j.nodes = f["NodeList"] == "(null)" ? "" : f["NodeList"];
    if (auto colon = f["ExitCode"].find(':'); colon != std::string::npos) {
      j.exit_code = Int(f["ExitCode"].substr(0, colon));
      j.term_signal = Int(f["ExitCode"].substr(colon + 1));
    }
    j.cpus = Int(f["NumCPUs"]);
    std::string mem = f["MinMemoryNode"];
    if (mem.empty()) {
      for (const std::string& item : Split(f["TRES"], ',')) {
        if (StartsWith(item, "mem=")) mem = item.substr(4);
      }
    }
    if (auto bytes = ParseSlurmMemory(mem)) j.mem_mib = *bytes >> 20;
    std::string gres = !f["TresPerNode"].empty() ? f["TresPerNode"] : f["TresPerJob"];
    if (StartsWith(gres, "gres:")) gres = gres.substr(5);
    if (gres != "(null)") j.gres = gres;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void AddGres(std::string_view text, PartitionGres* gres) {
  for (const std::string& item : Split(text, ',')) {
    std::string entry(Trim(item));
    if (auto paren = entry.find('('); paren != std::string::npos) entry.resize(paren);
    std::vector<std::string> parts = Split(entry, ':');
    if (parts.size() < 2) continue;
    const auto count = ParseInt(parts.back());
    if (!count || *count < 0) continue;
    const int n = static_cast<int>(*count);
    if (parts[0] == "gpu") gres->gpus_per_node = std::max(gres->gpus_per_node, n);
    if (parts[0] == "shard") gres->shards_per_node = std::max(gres->shards_per_node, n);
    if (parts[0] == "mps") gres->mps_per_node = std::max(gres->mps_per_node, n);
  }
}

std::vector<PartitionInfo> ParseSinfo(std::string_view text) {
  std::vector<PartitionInfo> partitions;
  for (const std::string& line : Split(text, '\n')) {
    std::vector<std::string> f = Split(line, '|');
    if (f.size() < 4 || Trim(f[0]).empty()) continue;
    f.resize(5);
    std::string name(Trim(f[0]));
    const bool is_default = !name.empty() && name.back() == '*';
    if (is_default) name.pop_back();
    auto it = std::find_if(partitions.begin(), partitions.end(), [&](const auto& p) { return p.name == name; });
    if (it == partitions.end()) {
      partitions.push_back(PartitionInfo{name, is_default, Trim(f[4]) != "down" && Trim(f[4]) != "inact", {}});
      it = partitions.end() - 1;
    }
    if (auto cpus = Int(f[1])) it->gres.cpus_per_node = std::max(it->gres.cpus_per_node, *cpus);
    if (auto mib = ParseInt(Trim(f[2]))) {
      it->gres.mem_per_node_bytes = std::max(it->gres.mem_per_node_bytes, static_cast<uint64_t>(*mib) << 20);
    }
    AddGres(f[3], &it->gres);
  }
  return partitions;
}

Result<PartitionInfo> ChoosePartition(const std::vector<PartitionInfo>& partitions, const std::string& name) {
  std::vector<std::string> names;
  for (const PartitionInfo& p : partitions) {
    if (name.empty() ? p.is_default : p.name == name) return p;
    names.push_back(p.name);
  }
  if (name.empty()) {
    return UsageError(fmt::format("the Slurm cluster has no default partition; name one in saturate.slurm.partition "
                                  "(partitions: {})",
                                  names.empty() ? "none" : JoinNonEmpty(names, ", ")));
  }
  std::string message = fmt::format("the Slurm cluster has no partition '{}'", name);
  if (auto close = ClosestMatch(name, names)) message += fmt::format(" (did you mean '{}'?)", *close);
  return UsageError(message + fmt::format("; partitions: {}", names.empty() ? "none" : JoinNonEmpty(names, ", ")));
}

Result<SlurmCli> SlurmCli::Find(const std::string& path_var) {
  SlurmCli cli;
  for (const char* name : {"sbatch", "squeue", "scontrol", "scancel", "sinfo"}) {
    auto path = run::ResolveProgram(name, path_var);
    if (!path) {
      return Error{fmt::format("the Slurm backend needs Slurm's {} on PATH (Debian's slurm-client package, or your "
                               "site's Slurm module): {}",
                               name, path.error().message),
                   kExitUsage};
    }
    cli.programs_[name] = *path;
  }
  return cli;
}

Result<SlurmCli::Output> SlurmCli::Call(const std::string& program, const std::vector<std::string>& args) const {
  struct Lines {
    std::mutex mu;
    std::string out, err;
  };
  auto lines = std::make_shared<Lines>();
  run::RunSpec rs;
  rs.argv = {programs_.at(program)};
  rs.argv.insert(rs.argv.end(), args.begin(), args.end());
  rs.time_limit_s = kCommandLimitS;
  rs.stop_on_interrupt = false;  // scancel must still run after Ctrl-C
  rs.stop_grace_s = 1;
  rs.term_grace_s = 1;
  rs.on_line = [lines](run::Stream stream, std::string_view line) {
    std::lock_guard lock(lines->mu);
    (stream == run::Stream::kStdout ? lines->out : lines->err).append(line).append("\n");
  };
  auto started = run::Run::Start(std::move(rs));
  if (!started) return started.error();
  const run::RunOutcome outcome = (*started)->Wait();
  if (outcome.exit_class == run::ExitClass::kStartFailed) return Error{outcome.detail};
  if (outcome.exit_class == run::ExitClass::kTimedOut) {
    return Error{fmt::format("{} did not answer within {:g} s: is slurmctld up?", program, kCommandLimitS)};
  }
  std::lock_guard lock(lines->mu);
  return Output{outcome.exit_code, lines->out, lines->err};
}

Result<std::string> SlurmCli::Submit(const std::vector<std::string>& options, const std::string& script) const {
  std::vector<std::string> args = {"--parsable"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(script);
  auto out = Call("sbatch", args);
  if (!out) return out.error();
  if (out->exit_code != 0) {
    return Error{fmt::format("sbatch refused the job: {}", Trim(out->err.empty() ? out->out : out->err)), kExitUsage};
  }
  return ParseSbatchId(out->out);
}

Result<std::vector<QueuedJob>> SlurmCli::Queue(const std::string& job_name) const {
  auto out = Call("squeue", {"-h", "-r", "-u", std::to_string(getuid()), "--name=" + job_name, "-o",
                             "%i|%j|%T|%r|%N|%k"});
  if (!out) return out.error();
  if (out->exit_code != 0) return Error{fmt::format("squeue failed: {}", Trim(out->err))};
  return ParseSqueue(out->out);
}

Result<std::vector<JobInfo>> SlurmCli::ShowJobs(const std::vector<std::string>& ids) const {
  std::vector<JobInfo> jobs;
  // One call per job: scontrol stops at the first id it no longer knows.
  for (const std::string& id : ids) {
    auto out = Call("scontrol", {"-o", "show", "job", id});
    if (!out) return out.error();
    if (out->exit_code != 0) continue;
    for (JobInfo& j : ParseScontrolJobs(out->out)) {
      if (j.id == id) jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

Result<std::vector<PartitionInfo>> SlurmCli::Partitions() const {
  auto out = Call("sinfo", {"-h", "-o", "%P|%c|%m|%G|%a"});
  if (!out) return out.error();
  if (out->exit_code != 0) {
    return Error{fmt::format("sinfo failed (is slurmctld reachable?): {}", Trim(out->err))};
  }
  return ParseSinfo(out->out);
}

Status SlurmCli::Cancel(const std::vector<std::string>& ids) const {
  if (ids.empty()) return Status::Ok();
  std::vector<std::string> args = ids;
  auto out = Call("scancel", args);
  if (!out) return out.error();
  if (out->exit_code != 0) return Error{fmt::format("scancel {} failed: {}", JoinIds(ids), Trim(out->err))};
  return Status::Ok();
}

}  // namespace sat::slurm
