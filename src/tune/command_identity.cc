#include "tune/command_identity.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "run/environment.h"
#include "run/spawn.h"
#include "telemetry/sampler.h"
#include "util/strings.h"

namespace sat::tune {
namespace {

namespace fs = std::filesystem;

// How long the interpreter may take to say where torch is; a Python that hangs costs no more than this.
constexpr double kLookupLimitS = 10;
// Scripts larger than this are hashed by their first bytes only (a script is kilobytes; a data file is not one).
constexpr size_t kMaxScriptBytes = 16 << 20;

// The command's words: argv, or for --shell its words joined as the runner joins them, split at spaces.
std::vector<std::string> Words(const std::vector<std::string>& argv, bool shell) {
  if (!shell) return argv;
  std::vector<std::string> words;
  for (const std::string& item : argv) {
    for (const std::string& w : Split(item, ' ')) {
      if (!w.empty()) words.push_back(w);
    }
  }
  return words;
}

// Everything the child prints on stdout within the limit; "" when it cannot be started.
std::string OutputOf(const std::vector<std::string>& argv) {
  auto child = run::Spawn({argv, run::CurrentEnvironment(), ""});
  if (!child) return "";
  std::string out;
  const double deadline = telemetry::MonotonicSeconds() + kLookupLimitS;
  for (double now = telemetry::MonotonicSeconds(); now < deadline; now = telemetry::MonotonicSeconds()) {
    pollfd p{child->stdout_read.get(), POLLIN, 0};
    if (poll(&p, 1, static_cast<int>((deadline - now) * 1000) + 1) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(p.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  kill(-child->pid, SIGKILL);
  waitpid(child->pid, nullptr, 0);
  return out;
}

std::string ReadPrefix(const fs::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::string TorchVersion(const std::string& python) {
  const std::string origin = std::string(Trim(OutputOf(
      {python, "-c", "import importlib.util as u; s = u.find_spec('torch'); print(s.origin if s else '')"})));
  if (origin.empty()) return "";
  const std::string version_py = ReadPrefix(fs::path(origin).parent_path() / "version.py", 64 << 10);
  std::smatch m;
  static const std::regex kVersion(R"(__version__\s*=\s*['"]([^'"]+)['"])");
  if (std::regex_search(version_py, m, kVersion)) return m[1].str();
  return "unknown (" + ShortHash(origin, 16) + ")";
}

}  // namespace

CommandIdentity IdentifyCommand(const std::vector<std::string>& argv, bool shell) {
  CommandIdentity id;
  std::error_code ec;
  id.cwd = fs::current_path(ec).string();
  const std::vector<std::string> words = Words(argv, shell);
  for (const std::string& w : words) {
    if (w.empty() || w.front() == '-' || !fs::is_regular_file(w, ec)) continue;
    // The interpreter itself is no script: /usr/bin/python3 is a file too.
    if (&w == &words.front() && access(w.c_str(), X_OK) == 0 && ReadPrefix(w, 2) != "#!") continue;
    id.script = w;
    id.script_digest = ShortHash(ReadPrefix(w, kMaxScriptBytes), 16);
    break;
  }
  if (!words.empty() && StartsWith(fs::path(words.front()).filename().string(), "python")) {
    id.torch_version = TorchVersion(words.front());
  }
  return id;
}

nlohmann::json IdentityJson(const CommandIdentity& identity) {
  return {{"cwd", identity.cwd},
          {"script", identity.script},
          {"script_digest", identity.script_digest},
          {"torch", identity.torch_version}};
}

}  // namespace sat::tune
