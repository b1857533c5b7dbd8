#include "sweep/command_template.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "sweep/py_values.h"
#include "util/strings.h"

namespace sat::sweep {
namespace {

constexpr std::string_view kStageMacro = "${stage:";

// W&B's ${envvar:NAME} (NAME of [A-Z0-9_]), anywhere in an item; an unset variable leaves NAME.
std::string ReplaceEnvVars(std::string_view item, const CommandContext& context) {
  constexpr std::string_view kOpen = "${envvar:";
  std::string out;
  size_t i = 0;
  while (i < item.size()) {
    const size_t at = item.find(kOpen, i);
    if (at == std::string_view::npos) break;
    size_t end = at + kOpen.size();
    while (end < item.size() &&
           ((item[end] >= 'A' && item[end] <= 'Z') || (item[end] >= '0' && item[end] <= '9') || item[end] == '_')) {
      ++end;
    }
    out += item.substr(i, at - i);
    if (end < item.size() && item[end] == '}') {
      const std::string name(item.substr(at + kOpen.size(), end - at - kOpen.size()));
      std::optional<std::string> value = context.getenv ? context.getenv(name) : std::nullopt;
      out += value.value_or(name);
      i = end + 1;
    } else {
      out += kOpen;
      i = at + kOpen.size();
    }
  }
  out += item.substr(i);
  return out;
}

// One W&B args macro for every parameter, in name order.
void AppendArgs(std::string_view macro, const nlohmann::json& values, std::vector<std::string>* argv) {
  for (const auto& [name, value] : values.items()) {
    if (macro == "args") {
      argv->push_back(fmt::format("--{}={}", name, PyStr(value)));
    } else if (macro == "args_no_hyphens") {
      argv->push_back(fmt::format("{}={}", name, PyStr(value)));
    } else if (macro == "args_no_equals") {
      argv->push_back("--" + name);
      argv->push_back(PyStr(value));
    } else if (!value.is_boolean()) {  // args_no_boolean_flags
      argv->push_back(fmt::format("--{}={}", name, PyStr(value)));
    } else if (value.get<bool>()) {
      argv->push_back("--" + name);
    }
  }
}

}  // namespace

CommandContext CommandContext::FromSystem() {
  CommandContext context;
  context.interpreter = "python3";
  const char* path = std::getenv("PATH");
  for (const auto& dir : Split(path ? path : "", ':')) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/python";
    if (access(candidate.c_str(), X_OK) == 0) {
      context.interpreter = "python";
      break;
    }
  }
  context.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
  return context;
}

const std::vector<std::string>& CommandMacros() {
  static const std::vector<std::string> macros = {
      "env",      "interpreter", "program", "args", "args_no_hyphens", "args_no_boolean_flags", "args_no_equals",
      "args_json"};
  return macros;
}

std::string_view MacroName(std::string_view item) {
  if (item.size() < 3 || !StartsWith(item, "${") || item.back() != '}') return {};
  return item.substr(2, item.size() - 3);
}

Result<std::string> FillPlaceholders(std::string_view item,
                                     const std::function<std::optional<std::string>(std::string_view)>& lookup,
                                     const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < item.size(); ++i) {
    const char c = item[i];
    if ((c == '{' || c == '}') && i + 1 < item.size() && item[i + 1] == c) {
      out += c;
      ++i;
    } else if (c == '$' && item.substr(i).starts_with(kStageMacro) && item.find('}', i) != std::string_view::npos) {
      // ${stage:N}: a staged path, filled in when the run starts (sweep/staging.h).
      const size_t close = item.find('}', i);
      out += item.substr(i, close - i + 1);
      i = close;
    } else if (c == '{') {
      const size_t close = item.find('}', i);
      if (close == std::string_view::npos) {
        return UsageError(fmt::format("command item '{}': unmatched '{{'; write {{{{ for a literal brace", item));
      }
      const std::string_view name = item.substr(i + 1, close - i - 1);
      auto value = lookup(name);
      if (!value) {
        auto close_name = ClosestMatch(name, names);
        return UsageError(fmt::format("command item '{}': {{{}}} is not a --grid parameter{}", item, name,
                                      close_name ? fmt::format(" (did you mean '{}'?)", *close_name) : ""));
      }
      out += *value;
      i = close;
    } else if (c == '}') {
      return UsageError(fmt::format("command item '{}': unmatched '}}'; write }}}} for a literal brace", item));
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> RenderArgv(const std::vector<std::string>& command, CommandStyle style,
                                    const std::string& program, const nlohmann::json& values,
                                    const CommandContext& context) {
  std::vector<std::string> argv;
  if (style == CommandStyle::kPlaceholders) {
    auto lookup = [&](std::string_view name) -> std::optional<std::string> {
      auto it = values.find(std::string(name));
      if (it == values.end()) return std::nullopt;
      return PyStr(*it);
    };
    for (const auto& item : command) {
      auto filled = FillPlaceholders(item, lookup, {});
      argv.push_back(filled.ok() ? *filled : item);
    }
    return argv;
  }
  for (const auto& template_item : command) {
    const std::string item = ReplaceEnvVars(template_item, context);
    const std::string_view macro = MacroName(item);
    if (macro == "env") {
      argv.push_back("/usr/bin/env");
    } else if (macro == "interpreter") {
      argv.push_back(context.interpreter);
    } else if (macro == "program") {
      argv.push_back(program);
    } else if (macro == "args_json") {
      argv.push_back(PyJsonDumps(values));
    } else if (StartsWith(macro, "args") &&
               std::find(CommandMacros().begin(), CommandMacros().end(), macro) != CommandMacros().end()) {
      AppendArgs(macro, values, &argv);
    } else {
      argv.push_back(item);
    }
  }
  return argv;
}

}  // namespace sat::sweep
