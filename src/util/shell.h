// Words for a POSIX shell: what saturate prints for a person to paste (probe's command, tune's pasteable command
// line) and what it writes into scripts (the Slurm submit script). Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sat {

// `s` as one word for a POSIX shell: unchanged when it is made of letters, digits and _@%+=:,./- (and not empty),
// else in single quotes, a quote inside written '\''.
std::string ShellQuote(std::string_view s);

// The command as a shell reads it back: each word ShellQuote'd, one space between.
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace sat
