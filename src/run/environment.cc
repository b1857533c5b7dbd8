#include "run/environment.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

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

std::string FindHelperPythonDir(const std::optional<std::string>& override_dir, const std::string& built_dir,
                                const std::string& binary_dir) {
  namespace fs = std::filesystem;
  if (override_dir && !override_dir->empty()) return *override_dir;
  auto holds_helper = [](const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / "sitecustomize.py", ec) && fs::is_directory(dir / "saturate", ec);
  };
  if (holds_helper(built_dir)) return built_dir;
  if (!binary_dir.empty()) {
    for (const char* rel : {"python", "../python", "../share/saturate/python"}) {
      fs::path candidate = fs::path(binary_dir) / rel;
      if (holds_helper(candidate)) return candidate.lexically_normal().string();
    }
  }
  return built_dir;
}

const std::string& HelperPythonDir() {
  static const std::string dir = [] {
    const char* env = std::getenv("SATURATE_PYTHON_DIR");
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return FindHelperPythonDir(env ? std::optional<std::string>(env) : std::nullopt, SATURATE_PYTHON_DIR,
                               ec ? std::string() : exe.parent_path().string());
  }();
  return dir;
}

}  // namespace sat::run
