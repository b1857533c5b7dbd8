#include "cli/serve_flag.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>

#include "monitor/exposition.h"
#include "telemetry/sampler.h"

namespace sat::cli {
namespace {

// dcgm-exporter's Hostname label: $NODE_NAME when set (Kubernetes), else the host name.
std::string Hostname() {
  if (const char* node = std::getenv("NODE_NAME"); node != nullptr && *node != '\0') return node;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

void AddServeFlag(CLI::App& app, ServeFlag& flag, std::string_view what) {
  flag.option = app.add_option("--serve", flag.value,
                               fmt::format("serve Prometheus metrics at http://[ADDR:]PORT/metrics while running "
                                           "(default {}, loopback only unless ADDR says otherwise): dcgm-exporter's "
                                           "GPU metric names, the host, {}",
                                           serve::kDefaultListen, what))
                    ->expected(0, 1)
                    ->type_name("[ADDR:]PORT");
}

Result<Exporter> StartExporter(const ServeFlag& flag) {
  Exporter exporter;
  if (!flag.given()) return exporter;
  auto address = serve::ParseListenAddress(flag.value.empty() ? serve::kDefaultListen : flag.value);
  if (!address) return address.error();
  exporter.figures = std::make_unique<live::LiveFigures>(Hostname());
  live::LiveFigures* figures = exporter.figures.get();
  auto server = serve::MetricsServer::Start(
      *address, [figures] { return monitor::RenderExposition(figures->Snapshot(telemetry::MonotonicSeconds())); });
  if (!server) return server.error();
  exporter.server = std::move(*server);
  fmt::print(stderr, "saturate: serving Prometheus metrics at {}\n", exporter.server->url());
  return exporter;
}

}  // namespace sat::cli
