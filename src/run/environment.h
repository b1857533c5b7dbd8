// The environment a run starts with: saturate's own, plus the caller's additions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sat::run {

// saturate's environment as "NAME=value" entries (a snapshot of `environ`; nothing in saturate calls setenv).
std::vector<std::string> CurrentEnvironment();

// The value of NAME in "NAME=value" entries; nullopt when absent.
std::optional<std::string> LookupVar(const std::vector<std::string>& env, std::string_view name);

// `base` with every entry of `set` added or replaced, then `pythonpath_prepend` put in front of PYTHONPATH
// (joined with ':', before whatever PYTHONPATH `base` or `set` gave). Order: base order, new names at the end.
std::vector<std::string> BuildEnvironment(const std::vector<std::string>& base,
                                          const std::map<std::string, std::string>& set,
                                          const std::vector<std::string>& pythonpath_prepend);

// The folder of saturate's Python side (sitecustomize.py and the saturate package), which every instrumented run
// gets at the front of PYTHONPATH: $SATURATE_PYTHON_DIR when set; else the folder the build was made from
// (compiled in) when it still holds sitecustomize.py; else `python/` or `../python/` or `../share/saturate/python/`
// beside the running binary (an installed or carried copy); else the compiled-in folder. Read once.
const std::string& HelperPythonDir();

// The same rule over given inputs, for tests: the override, the compiled-in folder and the binary's folder.
std::string FindHelperPythonDir(const std::optional<std::string>& override_dir, const std::string& built_dir,
                                const std::string& binary_dir);

}  // namespace sat::run
