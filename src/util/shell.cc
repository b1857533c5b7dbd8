#include "util/shell.h"

#include <algorithm>
#include <cctype>

namespace sat {

std::string ShellQuote(std::string_view s) {
  auto safe = [](unsigned char c) {
    return std::isalnum(c) || std::string_view("_@%+=:,./-").find(static_cast<char>(c)) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), safe)) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(a);
  }
  return out;
}

}  // namespace sat
