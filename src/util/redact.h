// Secrets in command lines. Every place saturate writes a command where others
// may read it (the exporter's `command` label, probe.json, results.json and report.html, sweep exports and logs)
// passes it through here first.
//
// The rule: a name that contains "key", "token", "secret" or "password" (any case) is secret, and its value
// becomes "***": `--api-key=X` and `API_TOKEN=X` keep the name, `--api-key X` keeps the flag and hides the next
// argument. Nothing else changes, so the redacted command still reads as the one that ran.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sat {

inline constexpr std::string_view kRedacted = "***";

bool IsSecretName(std::string_view name);

std::vector<std::string> RedactArgv(std::vector<std::string> argv);

// A command line as one string of words separated by spaces (a shell command, a /proc cmdline joined).
std::string RedactCommandLine(std::string_view line);

// A command as saturate runs it (run/runner.h): argv, or with `shell` one line of its elements joined with
// spaces, redacted as that line (then a single element). Unchanged when nothing in it is secret.
std::vector<std::string> RedactCommand(std::vector<std::string> argv, bool shell);

}  // namespace sat
