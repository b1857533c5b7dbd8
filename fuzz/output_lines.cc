// libFuzzer target: a child's output as saturate reads it. The bytes are cut into chunks as a pipe would deliver
// them, split into lines (run/line_splitter.h), and each line goes through what reads lines: the --parse presets
// (measure/line_parser.h), a sweep metric pattern, the exit classifier's evidence scan, and JSON as the reports
// write it. The first byte picks the maximum line length, so the cut of overlong lines is reached too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "measure/line_parser.h"
#include "run/exit_class.h"
#include "run/line_splitter.h"
#include "sweep/metrics.h"
#include "util/json_text.h"
#include "util/utf8.h"

namespace {

struct Readers {
  std::vector<sat::measure::LineParser> parsers;
  std::optional<sat::sweep::MetricPattern> metric;
  Readers() {
    for (const std::string& name : sat::measure::LineParser::PresetNames()) {
      if (auto p = sat::measure::LineParser::Create(name, 32.0); p) parsers.push_back(std::move(*p));
    }
    if (auto m = sat::sweep::MetricPattern::Create(R"(loss[=:]\s*(?P<loss>[0-9.e+-]+))", "fuzz"); m) {
      metric = std::move(*m);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Readers readers;
  if (size == 0) return 0;
  const size_t max_line = 4 + data[0] % 64;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  sat::run::LineSplitter splitter(max_line);
  sat::run::OutputEvidence evidence;
  double t = 0;
  auto sink = [&](std::string_view line) {
    if (line.size() > max_line + 3) __builtin_trap();  // a piece longer than the cap (plus a cut character)
    for (const auto& p : readers.parsers) (void)p.Parse(line, t += 0.01);
    if (readers.metric) (void)readers.metric->Match(line);
    evidence.Scan(line);
    (void)sat::JsonText(nlohmann::json{{"line", std::string(line)}, {"clip", sat::ClipText(line, 16)}});
  };
  // Chunks of 1 to 17 bytes, as reads from a pipe might return them.
  size_t chunk = 1;
  while (!rest.empty()) {
    const size_t n = std::min(rest.size(), chunk);
    splitter.Feed(rest.substr(0, n), sink);
    rest.remove_prefix(n);
    chunk = chunk % 17 + 1;
  }
  splitter.Finish(sink);
  (void)sat::JsonText(nlohmann::json{{"gpu", evidence.gpu_oom_line}, {"host", evidence.host_oom_line}});
  return 0;
}
