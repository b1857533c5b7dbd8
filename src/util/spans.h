// Spans of time (or any line) and the length they cover together: overlapping spans count once. Used for a GPU's
// busy time in a profiler trace (probe/trace_summary) and a GPU's held time in a sweep (sweep/cost). Pure.
#pragma once

#include <vector>

namespace sat {

struct Span {
  double start = 0, end = 0;  // a span with end <= start is empty
};

// The length of the union of `spans`; empty spans count nothing.
double UnionLength(std::vector<Span> spans);

}  // namespace sat
