// Statistics over a window of samples: what the measure and report layers quote ("GPU util p50 93%").
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "telemetry/sample.h"

namespace sat::telemetry {

struct Summary {
  size_t count = 0;  // values summarised (N/A values are not among them)
  double mean = 0, p50 = 0, p95 = 0, max = 0, min = 0;
};

// The p-quantile (0 <= p <= 1) of ascending `sorted` values by linear interpolation between closest ranks:
// with h = (n - 1) * p, x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]). This is numpy's default
// ("linear", Hyndman and Fan type 7): p = 0 is the minimum, p = 1 the maximum, and p50 of an even count is the
// mean of the middle two. `sorted` must not be empty.
double Percentile(const std::vector<double>& sorted, double p);

// nullopt when `values` holds no number; NaN values are dropped first.
std::optional<Summary> Summarize(std::vector<double> values);

// Reads one field of a Sample; nullopt when the field is N/A in that sample.
using SampleField = std::function<std::optional<double>(const Sample&)>;

// Summarises `field` over `samples`, skipping samples where it is N/A (N/A never counts as 0).
std::optional<Summary> Summarize(const std::vector<Sample>& samples, const SampleField& field);

}  // namespace sat::telemetry
