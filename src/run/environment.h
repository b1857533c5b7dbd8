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

}  // namespace sat::run
