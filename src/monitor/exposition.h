// The Prometheus page of `--serve`: saturate's live figures (live/live_figures.h) in the text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/). Pure: collection happens elsewhere.
//
// GPU series carry NVIDIA dcgm-exporter's metric names, types, HELP texts and labels (its
// etc/default-counters.csv and dcp-metrics-included.csv; labels as its GPU template writes them:
// gpu, UUID, pci_bus_id, device="nvidia<i>", modelName, Hostname), so dashboards built for dcgm-exporter show
// them. Units follow DCGM: memory in MiB, power in W, clocks in MHz, utilisation in %, DCGM_FI_PROF_* activity
// as a ratio 0..1 (here from NVML's GPM, in % / 100). Host, watched-process-tree and run series are saturate's own,
// named by Prometheus's conventions (saturate_ prefix, base units, _ratio for 0..1).
//
// A field that is N/A is left out, never written as 0; a family with no value is left out whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/live_figures.h"

namespace sat::monitor {

inline constexpr std::string_view kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

// The page: # HELP and # TYPE before each family, one line per series, "\n" line ends.
std::string RenderExposition(const live::Figures& input);

// A sample value as Prometheus reads it: integers without a fraction, others in the shortest form that reads
// back exactly, NaN, +Inf, -Inf.
std::string ExpositionValue(double value);

// A label value as valid UTF-8 (the text format requires it; a malformed byte becomes U+FFFD), with backslash,
// double quote and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace sat::monitor
