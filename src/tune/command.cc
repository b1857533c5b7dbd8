#include "tune/command.h"

#include <algorithm>
#include <cctype>

#include "measure/helper_env.h"
#include "util/json_text.h"
#include "util/shell.h"

namespace sat::tune {

RenderedRun RenderRun(const std::vector<std::string>& argv, const std::vector<KnobSpec>& knobs,
                      const KnobValues& values, const std::map<std::string, FlagBinding>& flags) {
  RenderedRun out;
  out.argv = argv;
  nlohmann::json helper_values = nlohmann::json::object();
  for (const auto& k : knobs) {
    auto it = values.find(k.name);
    const KnobValue value = it != values.end() ? it->second : k.Start();
    if (k.role == KnobRole::kBatchSize && value.is_number_integer() &&
        (it != values.end() || k.delivery == Delivery::kPlaceholder))
      out.batch_size = value.get<int64_t>();
    const FlagBinding* flag = nullptr;
    if (auto f = flags.find(k.name); f != flags.end()) flag = &f->second;
    else if (k.delivery == Delivery::kFlag && k.flag) flag = &*k.flag;
    if (flag) {
      if (it != values.end()) out.argv = SetFlag(out.argv, *flag, it->second);
      continue;
    }
    switch (k.delivery) {
      case Delivery::kPlaceholder: {
        const std::string text = ValueText(value);
        const std::string token = "{" + k.name + "}";
        for (auto& arg : out.argv) {
          for (size_t pos = 0; (pos = arg.find(token, pos)) != std::string::npos; pos += text.size())
            arg.replace(pos, token.size(), text);
        }
        break;
      }
      case Delivery::kHelper:
      case Delivery::kInjected:
      case Delivery::kFlag:
        if (it != values.end()) helper_values[k.name] = it->second;
        break;
      case Delivery::kEnvironment:
        if (it != values.end() && ValueText(it->second) == "on") out.env[std::string(kAllocatorVar)] = kAllocatorOn;
        break;
    }
  }
  if (!helper_values.empty()) measure::SetHelperKnobs(out.env, JsonText(helper_values));
  return out;
}

std::string PasteableCommand(const std::vector<std::string>& argv, bool shell, const std::vector<KnobSpec>& knobs,
                             const KnobValues& values, const std::string& python_dir) {
  // Injected knobs need saturate's instrumentation: outside it they are a code change (code_change.h).
  KnobValues outside = values;
  for (const auto& k : knobs)
    if (k.delivery == Delivery::kInjected) outside.erase(k.name);
  RenderedRun run = RenderRun(argv, knobs, outside);
  std::string out;
  auto word = [&](const std::string& w) { out += (out.empty() ? "" : " ") + w; };
  for (const auto& [name, value] : run.env) word(name + "=" + ShellQuote(value));
  if (run.env.count(measure::kKnobsVar) && !python_dir.empty()) word("PYTHONPATH=" + ShellQuote(python_dir));
  if (shell) {
    std::string joined;
    for (const auto& a : run.argv) joined += (joined.empty() ? "" : " ") + a;
    word("sh -c " + ShellQuote(joined));
  } else {
    for (const auto& a : run.argv) word(ShellQuote(a));
  }
  return out;
}

}  // namespace sat::tune
