// A sweep's command template and how a run's values fill it: W&B's macros (${env}, ${interpreter}, ${program},
// ${args} and its variants, ${envvar:NAME}) or the short form's {name} placeholders. Items are never passed
// through a shell. Pure functions, but CommandContext::FromSystem reads PATH and the environment.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace sat::sweep {

// How the items of a command template become a run's argv.
enum class CommandStyle {
  // W&B's macros, each standing for whole items: ${env} -> /usr/bin/env, ${interpreter}, ${program},
  // ${args} -> --name=value..., ${args_no_hyphens} -> name=value..., ${args_no_boolean_flags} -> --name for
  // True, nothing for False, ${args_no_equals} -> --name value..., ${args_json} -> one item holding a JSON
  // object. ${envvar:NAME} is replaced inside any item (by NAME itself when unset, as W&B does).
  kWandb,
  // The short form: {name} anywhere inside an item becomes the value; {{ and }} are literal braces.
  kPlaceholders,
};

// W&B's command when a sweep file has none.
inline const std::vector<std::string> kDefaultWandbCommand = {"${env}", "${interpreter}", "${program}", "${args}"};

// The whole-item macro names: "env", "interpreter", "program", "args", "args_no_hyphens", ...
const std::vector<std::string>& CommandMacros();

// The macro an item is ("args" for "${args}"), or empty.
std::string_view MacroName(std::string_view item);

// What the macros that depend on the machine stand for.
struct CommandContext {
  std::string interpreter = "python";  // ${interpreter}
  // ${envvar:NAME}; nullopt when unset.
  std::function<std::optional<std::string>(const std::string& name)> getenv;

  // `python` when an executable of that name is on PATH, else `python3`; getenv reads saturate's environment.
  static CommandContext FromSystem();
};

// Replaces each {name} in `item` with lookup(name); {{ and }} are literal braces; ${stage:N} (a staged path, which
// sweep/staging.h fills in when the run starts) is kept as it is. Errors (exit code 2) for an
// unbalanced brace and for a name lookup does not know (suggesting the closest of `names`).
Result<std::string> FillPlaceholders(std::string_view item,
                                     const std::function<std::optional<std::string>(std::string_view)>& lookup,
                                     const std::vector<std::string>& names);

// The argv of a run with `values` (an object, in name order) from a command template. Items are never passed
// through a shell.
std::vector<std::string> RenderArgv(const std::vector<std::string>& command, CommandStyle style,
                                    const std::string& program, const nlohmann::json& values,
                                    const CommandContext& context);

}  // namespace sat::sweep
