// `--serve [ADDR:]PORT` on monitor, probe, tune and sweep: the option, and the Prometheus exporter it starts
// (live::LiveFigures published by the command, served by serve::MetricsServer).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "live/live_figures.h"
#include "serve/metrics_server.h"
#include "util/result.h"

namespace sat::cli {

struct ServeFlag {
  CLI::Option* option = nullptr;  // owned by the app, which outlives the command's action
  std::string value;              // empty when given without a value: serve::kDefaultListen
  bool given() const { return option != nullptr && option->count() > 0; }
};

// Declares --serve on `app`; `what` says what the page carries besides the machine ("each trial's samples/s").
void AddServeFlag(CLI::App& app, ServeFlag& flag, std::string_view what);

// The running exporter: the figures the command publishes and the server that shows them. The server reads the
// figures until it is stopped, so it is declared last: it is destroyed (stopped and joined) first.
struct Exporter {
  std::unique_ptr<live::LiveFigures> figures;
  std::unique_ptr<serve::MetricsServer> server;
};

// Starts the exporter when --serve was given and says where on stderr; an empty Exporter (null figures) when it
// was not. Usage error for a malformed address; error when it cannot be bound.
Result<Exporter> StartExporter(const ServeFlag& flag);

}  // namespace sat::cli
