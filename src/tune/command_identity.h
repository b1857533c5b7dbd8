// What decides a trial's result besides its argv: the folder the command runs in, the contents of the script it
// names, and the torch its Python would import. Part of every trial's cache key (tune/cache.h), so an edited
// script, another project's train.py run with the same argv, or an upgraded torch never reuse old trials.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sat::tune {

struct CommandIdentity {
  std::string cwd;            // absolute; the commands run in saturate's working directory
  std::string script;         // the first argument that names a regular file, as given; "" when none
  std::string script_digest;  // a hash of that file's contents; "" when none
  std::string torch_version;  // torch's __version__ for the command's Python; "" when not Python or no torch
};

// Looks at the command without running it, except for one short run of its Python interpreter (when argv[0],
// or the first word of a --shell command, is python*) that locates torch without importing it (a few tens of
// milliseconds). Never fails: what cannot be found stays "".
CommandIdentity IdentifyCommand(const std::vector<std::string>& argv, bool shell);

nlohmann::json IdentityJson(const CommandIdentity& identity);

}  // namespace sat::tune
