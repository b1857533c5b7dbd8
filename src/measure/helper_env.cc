#include "measure/helper_env.h"

#include <fmt/format.h>

#include "run/environment.h"

namespace sat::measure {

void ApplyHelperEnv(const HelperEnv& h, run::RunSpec& spec) {
  auto& env = spec.env;
  if (!h.channel_path.empty()) env["SATURATE_CHANNEL"] = h.channel_path;
  if (!h.run_id.empty()) env["SATURATE_RUN_ID"] = h.run_id;
  if (h.auto_instrument) env["SATURATE_AUTO"] = *h.auto_instrument ? "1" : "0";
  if (h.report_interval_s) env["SATURATE_REPORT_INTERVAL"] = fmt::format("{:g}", *h.report_interval_s);
  if (!h.mode.empty()) env["SATURATE_MODE"] = h.mode;
  if (!h.auto_target.empty()) env["SATURATE_AUTO_TARGET"] = h.auto_target;
  if (h.samples_per_step) env["SATURATE_SAMPLES_PER_STEP"] = fmt::format("{}", *h.samples_per_step);
  if (!h.trace_path.empty()) env["SATURATE_TRACE"] = h.trace_path;
  env["PYTHONUNBUFFERED"] = "1";
  spec.pythonpath_prepend = {run::HelperPythonDir()};
}

void SetHelperKnobs(std::map<std::string, std::string>& env, std::string knobs_json) {
  env[kKnobsVar] = std::move(knobs_json);
}

}  // namespace sat::measure
