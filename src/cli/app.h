// The command-line front end: parses argv, dispatches to a subcommand from the table in app.cc,
// and is the one place that prints errors and chooses the exit code.
#pragma once

namespace sat::cli {

int Main(int argc, char** argv);

}  // namespace sat::cli
