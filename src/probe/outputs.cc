#include "probe/outputs.h"

#include <filesystem>
#include <system_error>

#include "probe/html_report.h"
#include "probe/report.h"
#include "util/atomic_file.h"
#include "util/json_text.h"

namespace sat::probe {

Status WriteProbeOutputs(const ProbeResult& result, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (Status st = WriteFileAtomically((fs::path(dir) / "probe.json").string(), JsonText(ProbeJson(result), 2) + "\n");
      !st)
    return st;
  return WriteFileAtomically((fs::path(dir) / "report.html").string(), ProbeHtml(result));
}

}  // namespace sat::probe
