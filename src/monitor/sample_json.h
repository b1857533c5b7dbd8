// JSON for every telemetry struct, for `saturate monitor --format=json` without a query and for
// anything else that records samples. Keys are the struct members' names (units in the names,
// as in sample.h); a value the hardware or kernel did not report is null, never 0.
//
// The functions live in sat::telemetry so that nlohmann finds them by argument-dependent lookup:
// `nlohmann::json j = sample;` just works.
#pragma once

#include <nlohmann/json.hpp>

#include "telemetry/sample.h"

namespace sat::telemetry {

void to_json(nlohmann::json& j, const GpuProcess& p);
void to_json(nlohmann::json& j, const GpuSample& g);
void to_json(nlohmann::json& j, const DiskRates& d);
void to_json(nlohmann::json& j, const NetRates& n);
void to_json(nlohmann::json& j, const HostSample& h);
void to_json(nlohmann::json& j, const ProcTreeSample& t);
// Adds "timestamp", the sample time as nvidia-smi prints it, beside time_s and mono_s.
// "tree" is null when no process tree is watched.
void to_json(nlohmann::json& j, const Sample& s);

}  // namespace sat::telemetry
