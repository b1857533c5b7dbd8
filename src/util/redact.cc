#include "util/redact.h"

#include <array>

#include "util/strings.h"

namespace sat {
namespace {

// The part of an argument that names it: "--api-key" of "--api-key=X", "API_TOKEN" of "API_TOKEN=X".
std::string_view NameOf(std::string_view arg) {
  const size_t eq = arg.find('=');
  return eq == std::string_view::npos ? arg : arg.substr(0, eq);
}

bool IsFlag(std::string_view arg) { return arg.size() > 1 && arg[0] == '-' && arg.find('=') == std::string_view::npos; }

// Redacts words[i] in place; true when the next word is the flag's value and must be hidden too.
bool RedactWord(std::string& word) {
  const size_t eq = word.find('=');
  if (eq != std::string::npos) {
    if (IsSecretName(word.substr(0, eq))) word = word.substr(0, eq + 1) + std::string(kRedacted);
    return false;
  }
  return IsFlag(word) && IsSecretName(word);
}

}  // namespace

bool IsSecretName(std::string_view name) {
  static constexpr std::array<std::string_view, 4> kWords = {"key", "token", "secret", "password"};
  const std::string lower = ToLower(NameOf(name));
  for (std::string_view w : kWords) {
    if (lower.find(w) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> RedactArgv(std::vector<std::string> argv) {
  bool hide_next = false;
  for (std::string& arg : argv) {
    if (hide_next && !IsFlag(arg)) {
      arg = std::string(kRedacted);
      hide_next = false;
      continue;
    }
    hide_next = RedactWord(arg);
  }
  return argv;
}

std::string RedactCommandLine(std::string_view line) {
  std::string out;
  bool hide_next = false;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      out += ' ';
      ++i;
      continue;
    }
    const size_t end = std::min(line.find(' ', i), line.size());
    std::string word(line.substr(i, end - i));
    if (hide_next && !IsFlag(word)) {
      word = std::string(kRedacted);
      hide_next = false;
    } else {
      hide_next = RedactWord(word);
    }
    out += word;
    i = end;
  }
  return out;
}

std::vector<std::string> RedactCommand(std::vector<std::string> argv, bool shell) {
  if (!shell) return RedactArgv(std::move(argv));
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  std::string redacted = RedactCommandLine(line);
  if (redacted == line) return argv;
  return {std::move(redacted)};
}

}  // namespace sat
