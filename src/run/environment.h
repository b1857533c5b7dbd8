// The environment a run starts with: saturate's own, plus the caller's additions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

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

// Where saturate's Python side is (sitecustomize.py and the saturate package, the folder every instrumented run gets
// at the front of PYTHONPATH), looked for in this order:
//   1. $SATURATE_PYTHON_DIR, when set and not empty: taken as given;
//   2. beside the running binary (/proc/self/exe, so with symlinks resolved): `python/`, `../python/` (build/saturate
//      in a checkout), `../share/saturate/python/` (the wheel's layout, scripts/pack-wheel: <prefix>/bin/saturate
//      beside <prefix>/share/saturate/python, for a venv, --user, --prefix or --target install, wherever the
//      prefix was moved or linked from);
//   3. the checkout's python/ the build was made from (compiled in), for a binary built in a tree elsewhere.
// An installed binary so takes its own copy, never the checkout it was built from, which may have changed since.
// `dir` is the first that holds the helper; when none does, the compiled-in folder, with `found` false and
// `looked_in` naming every folder tried (for the message of CheckHelperPythonDir).
struct HelperDir {
  std::string dir;
  bool found = false;
  std::vector<std::string> looked_in;
};
const HelperDir& HelperPythonLocation();  // read once
inline const std::string& HelperPythonDir() { return HelperPythonLocation().dir; }

// Ok when HelperPythonDir() holds the helper; else an error that names where saturate looked and what to do
// (reinstall, or set SATURATE_PYTHON_DIR). Every instrumented run checks it before it starts.
Status CheckHelperPythonDir();

// The rule over given inputs, for tests: the override, the compiled-in folder and the binary's folder ("" unknown).
HelperDir FindHelperPythonDir(const std::optional<std::string>& override_dir, const std::string& built_dir,
                              const std::string& binary_dir);
// The check over a given search result.
Status CheckHelperDir(const HelperDir& found);

}  // namespace sat::run
