#include "run/environment.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

namespace sat::run {
namespace {

std::string_view NameOf(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// Replaces NAME's entry in place, or appends one.
void Put(std::vector<std::string>& env, std::string_view name, std::string_view value) {
  std::string entry = std::string(name) + "=" + std::string(value);
  for (std::string& e : env) {
    if (NameOf(e) == name) {
      e = std::move(entry);
      return;
    }
  }
  env.push_back(std::move(entry));
}

bool HoldsHelper(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "sitecustomize.py", ec) &&
         std::filesystem::is_directory(dir / "saturate", ec);
}

}  // namespace

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

std::optional<std::string> LookupVar(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& e : env) {
    if (NameOf(e) == name && e.size() > name.size()) return e.substr(name.size() + 1);
  }
  return std::nullopt;
}

std::vector<std::string> BuildEnvironment(const std::vector<std::string>& base,
                                          const std::map<std::string, std::string>& set,
                                          const std::vector<std::string>& pythonpath_prepend) {
  std::vector<std::string> env = base;
  for (const auto& [name, value] : set) Put(env, name, value);
  if (!pythonpath_prepend.empty()) {
    std::string path;
    for (const std::string& dir : pythonpath_prepend) path += (path.empty() ? "" : ":") + dir;
    auto old = LookupVar(env, "PYTHONPATH");
    if (old && !old->empty()) path += ":" + *old;
    Put(env, "PYTHONPATH", path);
  }
  return env;
}

HelperDir FindHelperPythonDir(const std::optional<std::string>& override_dir, const std::string& built_dir,
                              const std::string& binary_dir) {
  namespace fs = std::filesystem;
  HelperDir out;
  auto try_dir = [&](const fs::path& candidate) {
    out.looked_in.push_back(candidate.string());
    if (!HoldsHelper(candidate)) return false;
    out.dir = candidate.string();
    out.found = true;
    return true;
  };
  if (override_dir && !override_dir->empty()) {
    out.dir = *override_dir;
    out.found = HoldsHelper(*override_dir);
    out.looked_in = {*override_dir};
    return out;
  }
  if (!binary_dir.empty()) {
    for (const char* rel : {"python", "../python", "../share/saturate/python"}) {
      if (try_dir((fs::path(binary_dir) / rel).lexically_normal())) return out;
    }
  }
  if (try_dir(built_dir)) return out;
  out.dir = built_dir;
  return out;
}

Status CheckHelperDir(const HelperDir& found) {
  if (found.found) return Status::Ok();
  const char* what = "saturate's Python helper (sitecustomize.py and the saturate/ package)";
  if (found.looked_in.size() == 1)
    return Error{fmt::format("SATURATE_PYTHON_DIR={} does not hold {}: unset SATURATE_PYTHON_DIR, or set it to the "
                             "python/ folder of a saturate checkout",
                             found.looked_in.front(), what)};
  return Error{fmt::format("{} is in none of {}: the installation is incomplete. Reinstall saturate (pip install "
                           "--force-reinstall saturate-*.whl puts it in <prefix>/share/saturate/python beside "
                           "<prefix>/bin/saturate), or set SATURATE_PYTHON_DIR to the python/ folder of a saturate "
                           "checkout",
                           what, fmt::join(found.looked_in, ", "))};
}

const HelperDir& HelperPythonLocation() {
  static const HelperDir found = [] {
    const char* env = std::getenv("SATURATE_PYTHON_DIR");
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return FindHelperPythonDir(env ? std::optional<std::string>(env) : std::nullopt, SATURATE_PYTHON_DIR,
                               ec ? std::string() : exe.parent_path().string());
  }();
  return found;
}

Status CheckHelperPythonDir() { return CheckHelperDir(HelperPythonLocation()); }

}  // namespace sat::run
