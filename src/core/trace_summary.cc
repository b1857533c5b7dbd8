#include "core/trace_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include "util/json_text.h"
#include "util/spans.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace sat::core {
namespace {

using nlohmann::json;

struct Event {
  std::string name, cat, thread;  // cat in lower case; thread: "pid/tid"
  Span span;
};

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr size_t kMaxNameChars = 60;

// The legacy profiler (a torch built without Kineto, such as Debian's) writes no categories: its CPU operators are
// under the pid "CPU functions" and its GPU work under "CUDA functions".
std::string LegacyCategory(const json& pid, const std::string& name) {
  if (pid == "CPU functions") return "cpu_op";
  if (pid != "CUDA functions") return "";
  if (StartsWith(name, "Memcpy")) return "gpu_memcpy";
  if (StartsWith(name, "Memset")) return "gpu_memset";
  return "kernel";
}

// The complete ("X") events of a trace; others (metadata, instant, flow) are not time spans.
std::vector<Event> CompleteEvents(const json& events) {
  std::vector<Event> out;
  for (const json& e : events) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    auto ts = e.find("ts"), dur = e.find("dur"), name = e.find("name");
    if (ts == e.end() || dur == e.end() || name == e.end() || !ts->is_number() || !dur->is_number() ||
        !name->is_string()) {
      continue;
    }
    Event ev;
    ev.name = name->get<std::string>();
    ev.cat = ToLower(e.value("cat", ""));
    if (ev.cat.empty()) ev.cat = LegacyCategory(e.value("pid", json()), ev.name);
    ev.thread = JsonText(e.value("pid", json())) + "/" + JsonText(e.value("tid", json()));
    ev.span.start = ts->get<double>();
    ev.span.end = ev.span.start + std::max(0.0, dur->get<double>());
    out.push_back(std::move(ev));
  }
  return out;
}

bool IsKernel(const std::string& cat) { return cat == "kernel"; }
bool IsMemcpy(const std::string& cat) { return cat == "gpu_memcpy" || cat == "memcpy"; }
bool IsMemset(const std::string& cat) { return cat == "gpu_memset" || cat == "memset"; }
bool IsCpuOp(const std::string& cat) { return cat == "cpu_op" || cat == "operator"; }

Span Clip(Span s, Span window) { return {std::max(s.start, window.start), std::min(s.end, window.end)}; }

// Total length of the union of `spans` inside `window`: overlapping intervals (several streams) count once.
double UnionLength(std::vector<Span> spans, Span window) {
  for (Span& s : spans) s = Clip(s, window);
  return sat::UnionLength(std::move(spans));
}

std::vector<TraceTop> Largest(std::map<std::string, TraceTop> by_name, double window_us, size_t n) {
  std::vector<TraceTop> top;
  for (auto& [name, t] : by_name) {
    t.name = name;
    t.share = window_us > 0 ? t.total_us / window_us : 0;
    top.push_back(std::move(t));
  }
  std::stable_sort(top.begin(), top.end(), [](const TraceTop& a, const TraceTop& b) { return a.total_us > b.total_us; });
  if (top.size() > n) top.resize(n);
  return top;
}

// CPU operators' self time inside the window: each operator's duration minus its children's on the same thread
// (aten::linear holds aten::addmm), so nested operators are not counted twice.
std::map<std::string, TraceTop> CpuSelfTimes(const std::vector<const Event*>& ops, Span window) {
  std::map<std::string, std::vector<const Event*>> by_thread;
  for (const Event* e : ops) {
    if (e->span.start >= window.start && e->span.start < window.end) by_thread[e->thread].push_back(e);
  }
  std::map<std::string, TraceTop> by_name;
  for (auto& [thread, events] : by_thread) {
    std::sort(events.begin(), events.end(), [](const Event* a, const Event* b) {
      return a->span.start != b->span.start ? a->span.start < b->span.start : a->span.end > b->span.end;
    });
    std::vector<std::pair<const Event*, double>> stack;  // (event, its self time so far)
    auto pop = [&] {
      TraceTop& t = by_name[stack.back().first->name];
      t.total_us += std::max(0.0, stack.back().second);
      t.count += 1;
      stack.pop_back();
    };
    for (const Event* e : events) {
      while (!stack.empty() && stack.back().first->span.end <= e->span.start) pop();
      Span clipped = Clip(e->span, window);
      if (!stack.empty()) stack.back().second -= clipped.end - clipped.start;
      stack.emplace_back(e, clipped.end - clipped.start);
    }
    while (!stack.empty()) pop();
  }
  return by_name;
}

std::string ShortName(const std::string& name) {
  if (name.size() <= kMaxNameChars) return name;
  return name.substr(0, Utf8PrefixLength(name, kMaxNameChars - 3)) + "...";
}

}  // namespace

Result<TraceSummary> SummarizeTrace(const std::string& path, size_t top_n) {
  std::ifstream in(path);
  if (!in) return Error{fmt::format("cannot read the trace {}", path)};
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{fmt::format("the trace {} is not valid JSON", path)};
  // Kineto writes {"traceEvents": [...]}; the legacy profiler the bare array.
  const json* events = doc.is_array() ? &doc : nullptr;
  if (doc.is_object() && doc.contains("traceEvents")) events = &doc["traceEvents"];
  if (events == nullptr || !events->is_array()) return Error{fmt::format("the trace {} has no traceEvents", path)};

  TraceSummary s;
  s.path = path;
  const std::vector<Event> all = CompleteEvents(*events);

  // The profiled steps, as the CPU saw them (GPU-side copies of the step annotations are left out).
  std::map<std::string, Span> steps;
  for (const Event& e : all) {
    if (StartsWith(e.name, kStepPrefix) && e.cat.find("gpu") == std::string::npos) steps.emplace(e.name, e.span);
  }
  if (steps.empty()) return Error{fmt::format("the trace {} has no profiler steps (ProfilerStep#N)", path)};
  Span window{steps.begin()->second.start, steps.begin()->second.end};
  double total = 0;
  for (const auto& [name, span] : steps) {
    window.start = std::min(window.start, span.start);
    window.end = std::max(window.end, span.end);
    total += span.end - span.start;
  }
  s.steps = static_cast<int>(steps.size());
  s.step_us = total / s.steps;
  s.window_us = window.end - window.start;

  // GPU activity inside the steps' window.
  std::vector<Span> kernels, copies, sets, any;
  std::map<std::string, TraceTop> kernel_time;
  std::vector<const Event*> cpu_ops;
  for (const Event& e : all) {
    if (IsKernel(e.cat)) {
      kernels.push_back(e.span);
      Span c = Clip(e.span, window);
      if (c.end > c.start) {
        TraceTop& t = kernel_time[e.name];
        t.total_us += c.end - c.start;
        t.count += 1;
      }
    } else if (IsMemcpy(e.cat)) {
      copies.push_back(e.span);
    } else if (IsMemset(e.cat)) {
      sets.push_back(e.span);
    } else if (IsCpuOp(e.cat) && !StartsWith(e.name, kStepPrefix)) {
      cpu_ops.push_back(&e);
      continue;
    } else {
      continue;
    }
    any.push_back(e.span);
  }
  s.gpu = !any.empty();
  if (s.gpu && s.window_us > 0) {
    s.kernel_share = UnionLength(kernels, window) / s.window_us;
    s.memcpy_share = UnionLength(copies, window) / s.window_us;
    s.memset_share = UnionLength(sets, window) / s.window_us;
    s.idle_share = std::max(0.0, 1 - UnionLength(any, window) / s.window_us);
    s.top = Largest(std::move(kernel_time), s.window_us, top_n);
  } else {
    s.top = Largest(CpuSelfTimes(cpu_ops, window), s.window_us, top_n);
  }
  return s;
}

std::string TracePath(const std::string& out_dir, std::string_view command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!out_dir.empty()) return fs::absolute(fs::path(out_dir) / "trace.json", ec).lexically_normal().string();
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fs::absolute(fmt::format("saturate-{}-trace-{}.json", command, stamp), ec).lexically_normal().string();
}

TraceOutcome CollectTrace(const std::string& path, const std::optional<measure::TraceInfo>& sent) {
  TraceOutcome o;
  o.path = path;
  if (!sent) {
    o.error = "the run ended before the profiler's steps ran (no trace message from the helper)";
  } else if (!sent->path) {
    o.error = sent->error.value_or("the helper wrote no trace");
  } else if (auto summary = SummarizeTrace(*sent->path)) {
    o.path = *sent->path;
    o.summary = std::move(*summary);
  } else {
    o.error = summary.error().message;
  }
  return o;
}

json TraceOutcomeJson(const std::optional<TraceOutcome>& o) {
  if (!o) return nullptr;
  return {{"path", o->path},
          {"error", o->error.empty() ? json(nullptr) : json(o->error)},
          {"summary", o->summary ? TraceJson(*o->summary) : json(nullptr)}};
}

std::vector<std::string> TraceOutcomeLines(const TraceOutcome& o) {
  if (o.summary) return TraceLines(*o.summary);
  return {fmt::format("trace: none ({})", o.error)};
}

std::vector<std::string> TraceLines(const TraceSummary& s) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("trace: {} ({} step{} of {:.1f} ms)", s.path, s.steps, s.steps == 1 ? "" : "s",
                              s.step_us / 1000));
  if (s.gpu) {
    lines.push_back(fmt::format("  GPU: idle {}, kernels {}, memory copies {}, memory sets {}",
                                FormatShare(s.idle_share), FormatShare(s.kernel_share), FormatShare(s.memcpy_share),
                                FormatShare(s.memset_share)));
  } else {
    lines.push_back("  no GPU activity in the trace (run on a GPU for the idle, kernel and copy shares)");
  }
  std::vector<std::string> top;
  for (const TraceTop& t : s.top) {
    top.push_back(fmt::format("{} {} ({}×)", ShortName(t.name), FormatShare(t.share), t.count));
  }
  if (!top.empty()) {
    lines.push_back(fmt::format("  top {}: {}", s.gpu ? "kernels" : "CPU ops (self time)", JoinNonEmpty(top, ", ")));
  }
  return lines;
}

json TraceJson(const TraceSummary& s) {
  json top = json::array();
  for (const TraceTop& t : s.top) {
    top.push_back({{"name", t.name}, {"total_ms", t.total_us / 1000}, {"count", t.count}, {"share", t.share}});
  }
  auto gpu_share = [&s](double v) { return s.gpu ? json(v) : json(nullptr); };
  return {{"path", s.path},
          {"steps", s.steps},
          {"step_ms", s.step_us / 1000},
          {"gpu", s.gpu},
          {"idle_share", gpu_share(s.idle_share)},
          {"kernel_share", gpu_share(s.kernel_share)},
          {"memcpy_share", gpu_share(s.memcpy_share)},
          {"memset_share", gpu_share(s.memset_share)},
          {"top_kind", s.gpu ? "kernel" : "cpu_op"},
          {"top", std::move(top)}};
}

}  // namespace sat::core
